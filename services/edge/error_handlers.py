"""The app's error handlers: each failure a request can meet answered in the one error shape
(``services.edge.problems``), with the headers its status calls for."""

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect

from contracts.errors import DomainError
from services.bus.asking import refused_as
from services.edge.door_audit import door_of
from services.edge.problems import (
    CODES,
    Forbidden,
    NotYetVisible,
    TooLarge,
    Unauthorized,
    UnsupportedMediaType,
    error,
    status_of,
)
from services.observing.metrics import UNAUTHENTICATED

log = logging.getLogger(__name__)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(Unauthorized)
    async def on_unauthorized(request: Request, __: Unauthorized) -> JSONResponse:
        UNAUTHENTICATED.labels(door_of(request.url.path)).inc()  # counted, not audited: D111
        response = error(401, "unauthorized", "send a valid API key: Authorization: Bearer <key>")
        response.headers["WWW-Authenticate"] = "Bearer"
        return response

    @app.exception_handler(Forbidden)
    async def on_forbidden(_: Request, exc: Forbidden) -> JSONResponse:
        refused_as("forbidden")  # a door's refusal, audited (decisions D110)
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
        not the server's failure, so it is no error with a traceback in the log."""
        log.info("%s %s: the client went away mid-request", request.method, route_of(request))
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
        refused_as(exc.code)  # audited unless the bus decided it (decisions D110)
        return error(status_of(exc), exc.code, exc.message, **exc.details)

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
        log.error("%s %s failed", request.method, route_of(request), exc_info=exc)
        return error(500, "internal", "the service failed on this request; it is logged")


def route_of(request: Request) -> str:
    """The route's template, not the path: a person's id in a path stays out of the log
    (decisions D134)."""
    return str(getattr(request.scope.get("route"), "path", request.url.path))
