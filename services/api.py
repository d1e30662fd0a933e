"""The HTTP API (FastAPI): the app, bearer keys and scopes, and errors as machine-readable
bodies ``{"error": <code>, "message": …, "field": …}``. Each context adds its own routes.
"""

import json
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, FastAPI, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from projections.runner import wait_for_position
from services.auth import KeyRing, Principal
from services.bus import CommandBus, Issued, Outcome, command_from
from services.errors import (
    Conflict,
    DomainError,
    InvalidTransition,
    NotConfigured,
    NotFound,
    NotPermitted,
    Refused,
)

# ``?minPosition=`` on reads: wait until the caller's own write is visible.
MinPosition = Annotated[
    int | None, Query(alias="minPosition", ge=0, description="Wait until this write is visible")
]


def command_id(idempotency_key: str | None) -> str:
    """The command's id: from the client's Idempotency-Key, so a retry is the same command."""
    return f"key/{idempotency_key}" if idempotency_key else str(uuid.uuid4())


STATUS = {
    NotFound: 404,
    InvalidTransition: 409,
    Conflict: 409,
    Refused: 422,
    NotConfigured: 409,
    NotPermitted: 403,
}
MAX_BODY_BYTES = 64 * 1024


def error(status: int, code: str, message: str, **details: Any) -> JSONResponse:
    return JSONResponse({"error": code, "message": message, **details}, status_code=status)


class Unauthorized(Exception):
    pass


class Forbidden(Exception):
    def __init__(self, scope: str) -> None:
        self.scope = scope


class NotYetVisible(Exception):
    def __init__(self, read_model: str, position: int, wanted: int) -> None:
        self.read_model, self.position, self.wanted = read_model, position, wanted


@dataclass
class Http:
    """What routes need: the command path, the read side, the keys and the clock."""

    bus: CommandBus
    pool: Any
    keys: KeyRing
    read_wait_seconds: float
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))

    def scope(self, required: str) -> Callable[..., Awaitable[Principal]]:
        """A dependency: the caller's principal, if its key holds ``required``."""

        async def check(authorization: Annotated[str | None, Header()] = None) -> Principal:
            if not authorization or not authorization.lower().startswith("bearer "):
                raise Unauthorized()
            principal = self.keys.identify(authorization[7:].strip())
            if principal is None:
                raise Unauthorized()
            if required not in principal.scopes:
                raise Forbidden(required)
            return principal

        return check

    async def execute(self, command: BaseModel, principal: Principal, command_id: str) -> Outcome:
        issued = Issued(
            command,
            principal.tenant_id,
            principal.subject,
            command_id,
            self.clock(),
            service=principal.service,
        )
        return await self.bus.execute(issued)

    async def read_at(self, read_model: str, min_position: int | None) -> None:
        """Read-your-writes: wait until the read model has applied ``min_position``."""
        if min_position is None:
            return
        schema = f"rm_{read_model}"
        reached = await wait_for_position(self.pool, schema, min_position, self.read_wait_seconds)
        if reached < min_position:
            raise NotYetVisible(read_model, reached, min_position)


T = TypeVar("T", bound=BaseModel)


async def read_command(request: Request, model: type[T], stamped: frozenset[str]) -> T:
    """A command from the request body; stamped fields are refused by name."""
    raw = await request.body()
    if len(raw) > MAX_BODY_BYTES:
        raise Refused(f"the body is over {MAX_BODY_BYTES} bytes", field="body")
    try:
        data = json.loads(raw or b"null")
    except ValueError as exc:
        raise Refused(f"the body is not JSON: {exc}", field="body") from None
    command = command_from(data, model, stamped)
    assert isinstance(command, model)
    return command


def create_app(http: Http, routers: list[APIRouter], *, lifespan: Any = None) -> FastAPI:
    app = FastAPI(
        title="Feedback Loop",
        summary="Feedback on AI agents' answers, recorded as events and published on Kafka.",
        lifespan=lifespan,
    )
    for router in routers:
        app.include_router(router)

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
        return error(
            503,
            "not-yet-visible",
            f"the {exc.read_model} read model is at position {exc.position}, not yet {exc.wanted}",
            position=exc.position,
        )

    @app.exception_handler(DomainError)
    async def on_domain_error(_: Request, exc: DomainError) -> JSONResponse:
        return JSONResponse(exc.body(), status_code=STATUS.get(type(exc), 400))

    @app.exception_handler(RequestValidationError)
    async def on_invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            {"field": ".".join(str(p) for p in e["loc"][1:]), "message": e["msg"]}
            for e in exc.errors()
        ]
        first = problems[0]["field"] if problems else None
        return error(422, "invalid", "the request is not valid", field=first, problems=problems)

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        await http.pool.fetchval("SELECT 1")
        return {"status": "ok"}

    return app
