"""HTTP routes of feedback: ``/factory/feedback`` (SPEC C11, C12)."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response

from contracts.answers import FeedbackPage, FeedbackWritten
from contracts.feedback import (
    STAMPED_FIELDS,
    FeedbackKind,
    RecordFeedback,
    SubjectKind,
    artifact_refs,
)
from projections.feedback_list import list_feedback
from services.api import Before, Http, IdempotencyKey, MinPosition, command_id, read_command
from services.artifacts import check_references
from services.auth import Principal
from services.openapi import body
from services.problems import READ_ERRORS, WRITE_ERRORS

EXAMPLE = {
    "projectId": "demo",
    "subjectKind": "run",
    "subjectRef": "run-1",
    "kind": "rating",
    "rating": 5,
}


def feedback_routes(http: Http) -> APIRouter:
    router = APIRouter(prefix="/factory/feedback", tags=["feedback"])

    @router.post(
        "",
        status_code=201,
        response_model=FeedbackWritten,
        responses={200: {"model": FeedbackWritten, "description": "A replay"}, **WRITE_ERRORS},
        openapi_extra=body(RecordFeedback, EXAMPLE),
    )
    async def record_feedback(
        request: Request,
        response: Response,
        principal: Annotated[Principal, Depends(http.scope("factory.feedback.write"))],
        idempotency_key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Record feedback on a run, attempt, artifact, memory or evaluation (SPEC C01–C12).

        ``tenantId`` and ``givenBy`` come from the API key. With an ``Idempotency-Key``, the
        same key and body answer the same ``feedbackId`` and append nothing.
        """
        command = await read_command(request, RecordFeedback, STAMPED_FIELDS)
        await check_references(http.pool, principal.tenant_id, artifact_refs(command))
        outcome = await http.execute(command, principal, command_id(idempotency_key))
        if not outcome.result.created:
            response.status_code = 200
        return {
            "feedbackId": str(outcome.result.feedback_id),
            "position": http.position(outcome, principal),
        }

    @router.get("", response_model=FeedbackPage, responses=READ_ERRORS)
    async def get_feedback(
        principal: Annotated[Principal, Depends(http.scope("factory.feedback.read"))],
        subject_kind: Annotated[SubjectKind | None, Query(alias="subjectKind")] = None,
        subject_ref: Annotated[str | None, Query(alias="subjectRef", max_length=512)] = None,
        kind: FeedbackKind | None = None,
        before: Before = None,
        limit: Annotated[int, Query(ge=1, le=200)] = 50,
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """Feedback by subject and kind, newest first, within the caller's tenant (C12, C51)."""
        await http.read_at("feedback_list", min_position, principal)
        page = await list_feedback(
            http.pool,
            principal.tenant_id,
            subject_kind=subject_kind,
            subject_ref=subject_ref,
            kind=kind,
            before=http.cursor(before, principal),
            limit=limit,
        )
        items = [http.with_position(item, principal) for item in page.items]
        return {"items": items, "next": http.sealed(page.next_before, principal)}

    return router
