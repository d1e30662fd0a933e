"""Every error the HTTP API answers, in one shape (issue 8 item 4):

    {"error": <code>, "message": <for a person>, "field": <what is wrong, or null>,
     "problems": [{"field": …, "message": …}, …]}

with ``Content-Type: application/json`` — for a refused command, a domain error, an unknown
route (404), a wrong method (405), a bad query, path or header parameter (422), and an
unexpected failure (500) alike. Some errors add details (``scope``, ``from``/``to``, an id).
The same shapes are declared in the OpenAPI document, per status, with examples.
"""

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect

from contracts.errors import (
    Conflict,
    DomainError,
    InvalidTransition,
    NotConfigured,
    NotFound,
    NotPermitted,
    Refused,
)

log = logging.getLogger(__name__)

STATUS = {
    NotFound: 404,
    InvalidTransition: 409,
    Conflict: 409,
    Refused: 422,
    NotConfigured: 409,
    NotPermitted: 403,
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
    def __init__(self, scope: str) -> None:
        self.scope = scope


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


def error(
    status: int,
    code: str,
    message: str,
    *,
    field: str | None = None,
    problems: list[dict[str, str]] | None = None,
    **details: Any,
) -> JSONResponse:
    body = {"error": code, "message": message, "field": field, "problems": problems or []}
    return JSONResponse({**body, **details}, status_code=status)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(Unauthorized)
    async def on_unauthorized(_: Request, __: Unauthorized) -> JSONResponse:
        response = error(401, "unauthorized", "send a valid API key: Authorization: Bearer <key>")
        response.headers["WWW-Authenticate"] = "Bearer"
        return response

    @app.exception_handler(Forbidden)
    async def on_forbidden(_: Request, exc: Forbidden) -> JSONResponse:
        return error(403, "forbidden", f"this key lacks the scope {exc.scope}", scope=exc.scope)

    @app.exception_handler(NotYetVisible)
    async def on_not_yet_visible(_: Request, exc: NotYetVisible) -> JSONResponse:
        # Says nothing of where the log is: that would tell of other tenants' writes.
        response = error(
            503,
            "not-yet-visible",
            f"the {exc.read_model} read model has not applied that write yet; try again",
        )
        response.headers["Retry-After"] = "1"
        return response

    @app.exception_handler(ClientDisconnect)
    async def on_gone(request: Request, _: ClientDisconnect) -> Response:
        """The client went away before its body arrived: nobody is there to answer, and it is
        not the server's failure (it was logged as one, with a traceback)."""
        log.info("%s %s: the client went away mid-request", request.method, request.url.path)
        return Response(status_code=400)  # the server drops it: the connection is gone

    @app.exception_handler(TooLarge)
    async def on_too_large(_: Request, exc: TooLarge) -> JSONResponse:
        return error(413, "too-large", f"the body is over {exc.limit} bytes", field="body")

    @app.exception_handler(UnsupportedMediaType)
    async def on_unsupported(_: Request, exc: UnsupportedMediaType) -> JSONResponse:
        given = exc.given[:100] or "no Content-Type"
        message = f"this route takes {', '.join(exc.accepted)}, not {given}"
        return error(415, "unsupported-media-type", message, field="Content-Type",
                     accepted=list(exc.accepted))  # fmt: skip

    @app.exception_handler(DomainError)
    async def on_domain_error(_: Request, exc: DomainError) -> JSONResponse:
        return error(STATUS.get(type(exc), 400), exc.code, exc.message, **exc.details)

    @app.exception_handler(RequestValidationError)
    async def on_invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        # loc is (where, name, …): "query", "path" or "header", then the parameter.
        problems = [
            {"field": ".".join(str(p) for p in e["loc"][1:]), "message": e["msg"]}
            for e in exc.errors()
        ]
        first = problems[0]["field"] if problems else None
        return error(422, "invalid", "the request is not valid", field=first, problems=problems)

    @app.exception_handler(HTTPException)
    async def on_http(_: Request, exc: HTTPException) -> JSONResponse:
        """Starlette's own answers: an unknown route (404), a wrong method (405)."""
        code = CODES.get(exc.status_code, "http-error")
        response = error(exc.status_code, code, str(exc.detail))
        response.headers.update(exc.headers or {})
        return response

    @app.exception_handler(Exception)
    async def on_failure(request: Request, exc: Exception) -> JSONResponse:
        log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
        return error(500, "internal", "the service failed on this request; it is logged")


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
