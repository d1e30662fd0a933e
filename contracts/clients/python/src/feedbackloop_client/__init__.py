"""The Python client of the Feedback Loop API (docs/python-client.md)::

    from feedbackloop_client import Client
    client = Client("http://127.0.0.1:8000", api_key="<key>")
    client.record_feedback(
        project_id="p", subject_kind="run", subject_ref="run-1", kind="rating", rating=5
    )

``models`` is generated from the served OpenAPI document; ``kafka`` (the ``kafka`` extra)
produces commands and consumes published events as CloudEvents.
"""

from feedbackloop_client import models
from feedbackloop_client.async_client import AsyncClient
from feedbackloop_client.auth import ApiKey, ClientCredentials
from feedbackloop_client.client import Client
from feedbackloop_client.errors import (
    ApiError,
    Conflict,
    ConnectionFailed,
    FeedbackLoopError,
    Forbidden,
    NotFound,
    NotYetVisible,
    RateLimited,
    ServerError,
    TooLarge,
    Unauthorized,
    Unavailable,
    UnsupportedMediaType,
    ValidationFailed,
)
from feedbackloop_client.retries import Retries

# The API version this client speaks: the OpenAPI document's info.version (decisions D200).
API_VERSION = "0.1.0"
__version__ = API_VERSION

__all__ = [
    "API_VERSION",
    "ApiError",
    "ApiKey",
    "AsyncClient",
    "Client",
    "ClientCredentials",
    "Conflict",
    "ConnectionFailed",
    "FeedbackLoopError",
    "Forbidden",
    "NotFound",
    "NotYetVisible",
    "RateLimited",
    "Retries",
    "ServerError",
    "TooLarge",
    "Unauthorized",
    "Unavailable",
    "UnsupportedMediaType",
    "ValidationFailed",
    "models",
]
