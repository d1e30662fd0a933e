"""Every error the HTTP API answers, in one shape:

    {"error": <code>, "message": <for a person>, "field": <what is wrong, or null>,
     "problems": [{"field": …, "message": …}, …]}

with ``Content-Type: application/json`` — for a refused command, a domain error, an unknown
route (404), a wrong method (405), a bad query, path or header parameter (422), and an
unexpected failure (500) alike. Some errors add details (``scope``, ``from``/``to``, an id).
The body is built here once (``problem``), answered by the handlers of
``services.edge.error_handlers`` and, per refused item, in a batch's answer (``problem_of``).
The same shapes are declared in the OpenAPI document, per status, with examples.
"""

from typing import Any

from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from contracts.errors import (
    Conflict,
    DomainError,
    InvalidTransition,
    NotConfigured,
    NotFound,
    NotPermitted,
    Refused,
    RoleRequired,
    Unreadable,
)

STATUS = {
    NotFound: 404,
    InvalidTransition: 409,
    Conflict: 409,
    Refused: 422,
    NotConfigured: 409,
    NotPermitted: 403,
    RoleRequired: 403,
    Unreadable: 409,
}
CODES = {404: "not-found", 405: "method-not-allowed", 413: "too-large", 415: "unsupported"}


class Problem(BaseModel):
    field: str = Field(description="The field, parameter or header, dotted for nested ones.")
    message: str


class ErrorBody(BaseModel):
    """The one shape of every error; some errors add details beside these fields."""

    model_config = ConfigDict(extra="allow")

    error: str = Field(description="Machine-readable code, e.g. `refused`, `not-found`.")
    message: str
    field: str | None = Field(description="What is wrong, when one thing is.")
    problems: list[Problem] = Field(description="Each thing wrong, when validation found some.")


class Unauthorized(Exception):
    pass


class Forbidden(Exception):
    """A valid key or token without the scope a route needs; ``principal``: whose it is
    (the audit's row of the refusal names them, decisions D110)."""

    def __init__(self, scope: str, principal: Any = None) -> None:
        self.scope = scope
        self.principal = principal


class NotYetVisible(Exception):
    def __init__(self, read_model: str) -> None:
        self.read_model = read_model


class TooLarge(Exception):
    def __init__(self, limit: int) -> None:
        self.limit = limit


class UnsupportedMediaType(Exception):
    """A body sent as a media type the route does not take (415), where the route names the
    ones it takes (``services.edge.app.media_type``)."""

    def __init__(self, given: str, accepted: tuple[str, ...]) -> None:
        self.given, self.accepted = given, accepted


def problem(
    code: str,
    message: str,
    *,
    field: str | None = None,
    problems: list[dict[str, str]] | None = None,
    **details: Any,
) -> dict[str, Any]:
    """The error body: ``error``, ``message``, ``field``, ``problems``, then any details."""
    return {
        "error": code,
        "message": message,
        "field": field,
        "problems": problems or [],
        **details,
    }


def error(
    status: int,
    code: str,
    message: str,
    *,
    field: str | None = None,
    problems: list[dict[str, str]] | None = None,
    **details: Any,
) -> JSONResponse:
    """The error body as an answer of ``status``."""
    body = problem(code, message, field=field, problems=problems, **details)
    return JSONResponse(body, status_code=status)


def status_of(error: DomainError) -> int:
    return STATUS.get(type(error), 400)


def problem_of(error: DomainError) -> dict[str, Any]:
    """A refused item of a batch: its status, then the error body with the field, problems
    and (for a conflict) the feedback its key was used for."""
    details = error.details
    body = problem(
        error.code,
        error.message,
        field=details.get("field"),
        problems=details.get("problems"),
        feedbackId=details.get("feedbackId"),
    )
    return {"status": status_of(error), **body}


_EXAMPLES: dict[int, tuple[str, dict[str, Any]]] = {
    401: (
        "No valid API key.",
        {"error": "unauthorized", "message": "send a valid API key: Authorization: Bearer <key>"},
    ),
    403: (
        "The key lacks the scope.",
        {
            "error": "forbidden",
            "message": "this key lacks the scope factory.feedback.write",
            "scope": "factory.feedback.write",
        },
    ),
    404: ("Not found (for this tenant).", {"error": "not-found", "message": "no report …"}),
    409: (
        "Conflicts with what was accepted (an Idempotency-Key with another body), or the state "
        "does not allow it.",
        {
            "error": "conflict",
            "message": "this idempotency key was already used with a different request",
        },
    ),
    413: (
        "The body is over 64 KiB.",
        {"error": "too-large", "message": "the body is over 65536 bytes", "field": "body"},
    ),
    415: (
        "The body's Content-Type is not one this route takes; `accepted` lists them.",
        {
            "error": "unsupported-media-type",
            "message": "this route takes application/toml, text/plain, not application/json",
            "field": "Content-Type",
            "accepted": ["application/toml", "text/plain"],
        },
    ),
    422: (
        "Refused as written: the body (not JSON, too deep, a duplicate key, a wrong type, a "
        "stamped field) or a parameter; `field` names it.",
        {
            "error": "refused",
            "message": "rating: Input should be a valid integer",
            "field": "rating",
            "problems": [{"field": "rating", "message": "Input should be a valid integer"}],
        },
    ),
    503: (
        "The read model has not applied `minPosition` within the wait; retry (Retry-After).",
        {"error": "not-yet-visible", "message": "the inbox read model has not applied that …"},
    ),
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The errors a route can answer, for ``/openapi.json``: the shape and an example each."""
    return {
        status: {
            "model": ErrorBody,
            "description": _EXAMPLES[status][0],
            "content": {
                "application/json": {
                    "example": {"field": None, "problems": [], **_EXAMPLES[status][1]}
                }
            },
        }
        for status in statuses
    }


WRITE_ERRORS = error_responses(401, 403, 404, 409, 413, 422)
READ_ERRORS = error_responses(401, 403, 404, 422, 503)
