"""The HTTP API (FastAPI). Errors answer with a machine-readable body:
``{"error": <code>, "message": …, "field": …}``.
"""

import json
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from contracts.feedback import STAMPED_FIELDS, FeedbackKind, RecordFeedback, SubjectKind
from projections.feedback_list import list_feedback
from projections.runner import wait_for_position
from services.auth import KeyRing, Principal
from services.bus import CommandBus, Issued, command_from
from services.errors import Conflict, DomainError, InvalidTransition, NotFound, Refused

STATUS = {NotFound: 404, InvalidTransition: 409, Conflict: 409, Refused: 422}
MAX_BODY_BYTES = 64 * 1024


def error(status: int, code: str, message: str, **details: Any) -> JSONResponse:
    return JSONResponse({"error": code, "message": message, **details}, status_code=status)


class Unauthorized(Exception):
    pass


class Forbidden(Exception):
    def __init__(self, scope: str) -> None:
        self.scope = scope


def create_app(
    *,
    bus: CommandBus,
    pool: Any,
    keys: KeyRing,
    read_wait_seconds: float,
    lifespan: Any = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> FastAPI:
    app = FastAPI(
        title="Feedback Loop",
        summary="Feedback on AI agents' answers, recorded as events and published on Kafka.",
        lifespan=lifespan,
    )

    def scope(required: str) -> Callable[..., Awaitable[Principal]]:
        async def check(authorization: Annotated[str | None, Header()] = None) -> Principal:
            if not authorization or not authorization.lower().startswith("bearer "):
                raise Unauthorized()
            principal = keys.identify(authorization[7:].strip())
            if principal is None:
                raise Unauthorized()
            if required not in principal.scopes:
                raise Forbidden(required)
            return principal

        return check

    @app.exception_handler(Unauthorized)
    async def on_unauthorized(_: Request, __: Unauthorized) -> JSONResponse:
        response = error(401, "unauthorized", "send a valid API key: Authorization: Bearer <key>")
        response.headers["WWW-Authenticate"] = "Bearer"
        return response

    @app.exception_handler(Forbidden)
    async def on_forbidden(_: Request, exc: Forbidden) -> JSONResponse:
        return error(403, "forbidden", f"this key lacks the scope {exc.scope}", scope=exc.scope)

    @app.exception_handler(DomainError)
    async def on_domain_error(_: Request, exc: DomainError) -> JSONResponse:
        return JSONResponse(exc.body(), status_code=STATUS.get(type(exc), 400))

    @app.exception_handler(RequestValidationError)
    async def on_invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            {"field": ".".join(str(p) for p in e["loc"][1:]), "message": e["msg"]}
            for e in exc.errors()
        ]
        return error(422, "invalid", "the request is not valid", problems=problems)

    @app.post("/factory/feedback", status_code=201, tags=["feedback"])
    async def record_feedback(
        request: Request,
        response: Response,
        principal: Annotated[Principal, Depends(scope("factory.feedback.write"))],
        idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
    ) -> dict[str, Any]:
        """Record feedback on a run, attempt, artifact, memory or evaluation (SPEC C01–C12).

        ``tenantId`` and ``givenBy`` come from the API key. With an ``Idempotency-Key``, the
        same key and body answer the same ``feedbackId`` and append nothing.
        """
        command = parse_body(await request.body())
        outcome = await bus.execute(
            Issued(
                command=command,
                tenant_id=principal.tenant_id,
                actor=principal.subject,
                command_id=f"key/{idempotency_key}" if idempotency_key else str(uuid.uuid4()),
                at=clock(),
            )
        )
        if not outcome.result.created:
            response.status_code = 200
        return {"feedbackId": str(outcome.result.feedback_id), "position": outcome.position}

    @app.get("/factory/feedback", tags=["feedback"])
    async def get_feedback(
        principal: Annotated[Principal, Depends(scope("factory.feedback.read"))],
        subject_kind: Annotated[SubjectKind | None, Query(alias="subjectKind")] = None,
        subject_ref: Annotated[str | None, Query(alias="subjectRef", max_length=512)] = None,
        kind: FeedbackKind | None = None,
        before: Annotated[int | None, Query(ge=1, description="Cursor: 'next' of a page")] = None,
        limit: Annotated[int, Query(ge=1, le=200)] = 50,
        min_position: Annotated[
            int | None,
            Query(alias="minPosition", ge=0, description="Wait until this write is visible"),
        ] = None,
    ) -> Any:
        """Feedback by subject and kind, newest first, within the caller's tenant (C12, C51)."""
        schema = "rm_feedback_list"
        if min_position is not None:
            reached = await wait_for_position(pool, schema, min_position, read_wait_seconds)
            if reached < min_position:
                return error(
                    503,
                    "not-yet-visible",
                    f"the feedback list is at position {reached}, not yet {min_position}",
                    position=reached,
                )
        page = await list_feedback(
            pool,
            principal.tenant_id,
            subject_kind=subject_kind,
            subject_ref=subject_ref,
            kind=kind,
            before=before,
            limit=limit,
        )
        return {"items": page.items, "next": page.next_before}

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        await pool.fetchval("SELECT 1")
        return {"status": "ok"}

    @app.get("/metrics", include_in_schema=False)
    async def metrics() -> PlainTextResponse:
        return PlainTextResponse(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    return app


def parse_body(raw: bytes) -> RecordFeedback:
    if len(raw) > MAX_BODY_BYTES:
        raise Refused(f"the body is over {MAX_BODY_BYTES} bytes", field="body")
    try:
        data = json.loads(raw or b"null")
    except ValueError as exc:
        raise Refused(f"the body is not JSON: {exc}", field="body") from None
    command = command_from(data, RecordFeedback, STAMPED_FIELDS)
    assert isinstance(command, RecordFeedback)
    return command
