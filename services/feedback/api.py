"""HTTP routes of feedback: ``/factory/feedback`` (SPEC C11, C12) and its batch
``/factory/feedback:batch``."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import StreamingResponse

from contracts.answers import FeedbackBatchWritten, FeedbackPage, FeedbackWritten
from contracts.errors import DomainError, Refused
from contracts.feedback import (
    MAX_BATCH_ITEMS,
    STAMPED_FIELDS,
    FeedbackKind,
    RecordFeedback,
    RecordFeedbackBatch,
    SubjectKind,
    artifact_refs,
)
from projections.feedback_list import list_feedback
from services.bus.command_bodies import command_from
from services.bus.decisions import Outcome
from services.edge.auth import Principal
from services.edge.bodies import MAX_BATCH_BYTES, command_of, read_json
from services.edge.exports import EXPORT_ANSWERS, FormatParameter, export_download
from services.edge.fast_lane import FastLane
from services.edge.http import Http
from services.edge.json_answers import answer_json
from services.edge.openapi import body
from services.edge.parameters import PAGE, Before, IdempotencyKey, Limit, MinPosition, command_id
from services.edge.problems import READ_ERRORS, WRITE_ERRORS, problem_of
from services.feedback.export import feedback_export
from services.store.artifacts import check_references

EXAMPLE = {
    "projectId": "demo",
    "subjectKind": "run",
    "subjectRef": "run-1",
    "kind": "rating",
    "rating": 5,
}
BATCH_EXAMPLE = {
    "items": [
        EXAMPLE | {"idempotencyKey": "rating-run-1"},
        EXAMPLE | {"subjectRef": "run-2", "rating": 4, "idempotencyKey": "rating-run-2"},
    ]
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
        principal: Annotated[Principal, Depends(http.scope("factory.feedback.write"))],
        idempotency_key: IdempotencyKey = None,
    ) -> Response:
        """Record feedback on a run, attempt, artifact, memory or evaluation (SPEC C01–C12).

        ``tenantId`` and ``givenBy`` come from the API key. With an ``Idempotency-Key``, the
        same key and body answer the same ``feedbackId`` and append nothing.
        """
        status, answer = await record(await request.body(), principal, idempotency_key)
        return Response(answer, status_code=status, media_type="application/json")

    async def record(
        raw: bytes, principal: Principal, idempotency_key: str | None
    ) -> tuple[int, bytes]:
        command = command_of(raw, RecordFeedback, STAMPED_FIELDS)
        await check_references(http.pool, principal.tenant_id, artifact_refs(command))
        outcome = await http.execute(command, principal, command_id(idempotency_key))
        answer = {
            "feedbackId": outcome.result.feedback_id,  # written as str() writes it
            "position": http.position(outcome, principal),
        }
        # Encoded here (two strings), not validated again against FeedbackWritten on the
        # way out: the hottest route answers through its fast lane (services.edge.fast_lane).
        return (201 if outcome.result.created else 200), answer_json(answer)

    async def record_in_lane(
        raw: bytes, key: str, idempotency_key: str | None
    ) -> tuple[int, bytes]:
        principal = await http.authorized(key, "factory.feedback.write")
        return await record(raw, principal, idempotency_key)

    http.lanes.append(FastLane("/factory/feedback", record_in_lane))

    @router.post(
        ":batch",
        status_code=200,
        response_model=FeedbackBatchWritten,
        responses=WRITE_ERRORS,
        openapi_extra=body(RecordFeedbackBatch, BATCH_EXAMPLE),
    )
    async def record_feedback_batch(
        request: Request,
        principal: Annotated[Principal, Depends(http.scope("factory.feedback.write"))],
        idempotency_key: IdempotencyKey = None,
    ) -> Response:
        """Record up to 1,000 pieces of feedback at once, each item decided alone (its own
        201, 200, 409 or 422, in the order sent) and all their events appended in one
        transaction.

        The body is as strict as the single route's: an item that breaks the published
        schema (a wrong type, an unknown or stamped field) refuses the whole batch with 422,
        naming ``items.<index>.<field>``, and nothing is stored. What only a decision can
        tell — a rating without its value, an artifact that does not exist, a key used
        for another item (409) — refuses that item alone; the others are recorded.

        An item's ``idempotencyKey`` works as a single POST's ``Idempotency-Key`` (the same
        key names the same feedback on both routes); without one, the request's
        ``Idempotency-Key`` and the item's index (``<key>/<index>``) make its key."""
        items = batch_items(await read_json(request, MAX_BATCH_BYTES))
        read = [read_item(item, index) for index, item in enumerate(items)]
        answers: list[dict[str, Any] | None] = [None] * len(items)
        commands: list[tuple[RecordFeedback, str]] = []
        places: list[int] = []
        for index, (command, key) in enumerate(read):
            try:
                await check_references(http.pool, principal.tenant_id, artifact_refs(command))
            except DomainError as error:
                answers[index] = problem_of(error)
                continue
            if key is None and idempotency_key is not None:
                key = f"{idempotency_key}/{index}"
            commands.append((command, command_id(key)))
            places.append(index)
        position = None
        results = await http.execute_all([*commands], principal) if commands else []
        for index, result in zip(places, results, strict=True):
            if isinstance(result, DomainError):
                answers[index] = problem_of(result)
            elif isinstance(result, BaseException):
                raise result  # the store failed the whole transaction: a 500, nothing stored
            else:
                answers[index] = written(result)
                position = max(position or 0, result.position)
        answer = {"items": answers, "position": http.sealed(position, principal)}
        return Response(answer_json(answer), media_type="application/json")

    @router.get("", response_model=FeedbackPage, responses=READ_ERRORS)
    async def get_feedback(
        principal: Annotated[Principal, Depends(http.reading("factory.feedback.read"))],
        subject_kind: Annotated[SubjectKind | None, Query(alias="subjectKind")] = None,
        subject_ref: Annotated[str | None, Query(alias="subjectRef", max_length=512)] = None,
        kind: FeedbackKind | None = None,
        before: Before = None,
        limit: Limit = PAGE,
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

    @router.get(
        "/export", response_class=StreamingResponse, responses={**EXPORT_ANSWERS, **READ_ERRORS}
    )
    async def export_feedback(
        request: Request,
        principal: Annotated[Principal, Depends(http.reading("factory.feedback.read"))],
        format: FormatParameter = "csv",
        subject_kind: Annotated[SubjectKind | None, Query(alias="subjectKind")] = None,
        subject_ref: Annotated[str | None, Query(alias="subjectRef", max_length=512)] = None,
        kind: FeedbackKind | None = None,
    ) -> StreamingResponse:
        """The feedback the list answers under the same filters, all of it, newest first, as
        CSV or JSON Lines, streamed (decisions D210–D212). Granting it is a row of the audit."""
        export = feedback_export(
            principal.tenant_id, subject_kind=subject_kind, subject_ref=subject_ref, kind=kind
        )
        return export_download(http, request, export, format, principal)

    return router


def batch_items(data: Any) -> list[Any]:
    """The ``items`` of a batch body; the envelope is as strict as a command (STYLE 12)."""
    if not isinstance(data, dict):
        raise Refused("the body must be a JSON object with items", field="body")
    for name in sorted(data.keys() - {"items"}):
        raise Refused(f"a batch has no field {name!r}", field=name)
    items = data.get("items")
    if not isinstance(items, list) or not items:
        raise Refused("items must be a list of 1 to 1000 feedback items", field="items")
    if len(items) > MAX_BATCH_ITEMS:
        raise Refused(f"at most {MAX_BATCH_ITEMS} items in one batch", field="items")
    return items


def read_item(item: Any, index: int) -> tuple[RecordFeedback, str | None]:
    """One item: a RecordFeedback (as strict as the single route's body) and its own key;
    refused naming ``items.<index>.<field>``."""
    try:
        if not isinstance(item, dict):
            raise Refused("an item must be a JSON object", field="body")
        fields = dict(item)
        key = fields.pop("idempotencyKey", None)
        if key is not None and not (
            isinstance(key, str) and 0 < len(key) <= 200 and "\x00" not in key
        ):
            raise Refused(
                "idempotencyKey must be text of 1 to 200 characters", field="idempotencyKey"
            )
        command = command_from(fields, RecordFeedback, STAMPED_FIELDS, strict=True)
    except Refused as refused:
        raise in_item(refused, index) from None
    assert isinstance(command, RecordFeedback)
    return command, key


def in_item(refused: Refused, index: int) -> Refused:
    """An item's refusal as the batch's: its fields named from the body's top."""

    def named(field: str) -> str:
        return f"items.{index}" if field == "body" else f"items.{index}.{field}"

    problems = [
        {**problem, "field": named(problem["field"])}
        for problem in refused.details.get("problems", [])
    ]
    field = named(refused.details["field"])
    return Refused(f"items.{index}: {refused.message}", field=field, problems=problems)


def written(outcome: Outcome) -> dict[str, Any]:
    return {
        "status": 201 if outcome.result.created else 200,
        "feedbackId": str(outcome.result.feedback_id),
    }
