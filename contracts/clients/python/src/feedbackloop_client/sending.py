"""What ``Client`` and ``AsyncClient`` share around one request: its headers (the credentials,
the Idempotency-Key of a write: decisions D203), the answer read into its model or raised as
its typed error, and the position a write answered, kept for read-your-writes (D207)."""

import uuid
from typing import Any, TypeVar

import httpx
import pydantic

from feedbackloop_client.calls import Call
from feedbackloop_client.errors import error_of

A = TypeVar("A", bound=pydantic.BaseModel)
CONNECTION_ERRORS = (httpx.TransportError,)  # connect, read, write and protocol failures
USER_AGENT = "feedbackloop-client/0.1.0"


def with_key(call: Call[A], idempotency_key: str | None) -> Call[A]:
    """A write with its Idempotency-Key: the caller's, or a new uuid4. Chosen once, before
    the first attempt, so every retry is the same request to the service (SPEC C11)."""
    if not call.write:
        return call
    key = idempotency_key or call.idempotency_key or str(uuid.uuid4())
    return Call(call.method, call.path, call.answer, call.params, call.json, call.content,
                call.content_type, key)  # fmt: skip


def request(
    http: httpx.Client | httpx.AsyncClient, call: Call[Any], authorization: str
) -> httpx.Request:
    headers = {"Authorization": authorization, "User-Agent": USER_AGENT}
    if call.idempotency_key is not None:
        headers["Idempotency-Key"] = call.idempotency_key
    if call.content_type is not None:
        headers["Content-Type"] = call.content_type
    return http.build_request(
        call.method, call.path, params=call.query(), json=call.json, content=call.content,
        headers=headers,
    )  # fmt: skip


def answer(call: Call[A], response: httpx.Response) -> A:
    if not response.is_success:
        raise error_of(response)
    return call.answer.model_validate(response.json())


def position_written(answered: pydantic.BaseModel) -> str | None:
    position = getattr(answered, "position", None)
    return position if isinstance(position, str) else None
