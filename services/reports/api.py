"""HTTP routes of reports: draft, compose a wrong-answer report, submit, review, the Inbox."""

from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import StreamingResponse

from contracts.answers import (
    InboxPage,
    MyReportsPage,
    ReportDetail,
    ReportSubmitted,
    ReportWritten,
    WrongAnswerDrafted,
)
from contracts.errors import NotFound, Refused
from contracts.reports import (
    STAMPED_REPORT_FIELDS,
    Category,
    ComposeWrongAnswer,
    DraftReport,
    Kind,
    ReportStatus,
    ReviewReport,
    ReviewReportCommand,
    ReviewStatus,
    SubmitReport,
)
from contracts.scalars import is_blank
from projections.inbox import SCHEMA as INBOX_SCHEMA
from projections.inbox import InboxFilter, get_report, list_inbox, list_mine, report_lifecycle
from projections.report_annotations import annotations_of
from services.bus.decisions import Outcome
from services.edge.auth import Principal
from services.edge.bodies import no_body, read_command
from services.edge.exports import EXPORT_ANSWERS, FormatParameter, export_download
from services.edge.http import Http
from services.edge.openapi import body
from services.edge.parameters import (
    PAGE,
    Before,
    IdempotencyKey,
    Instant,
    Limit,
    MinPosition,
    command_id,
)
from services.edge.problems import READ_ERRORS, WRITE_ERRORS
from services.permissions.rules import READERS, reads_notes, reads_report
from services.reports.export import reports_export

WRITE, READ = "factory.feedback.write", "factory.feedback.read"


def answer(position: str, outcome: Outcome, **extra: Any) -> dict[str, Any]:
    state = outcome.result
    return {
        "reportId": str(state.report_id),
        "status": state.status,
        "category": state.category,
        "position": position,
        **extra,
    }


WRONG_ANSWER_EXAMPLE = {
    "thread": "thread-1",
    "messageRef": "message-2",
    "reply": {"agentName": "Office/Agent/Coach", "modelName": "claude-sonnet-4-5"},
    "account": "It said my course does not exist.",
    "evidence": {"node": "Office/Course/42", "readable": True},
}


def replayed(outcome: Outcome, response: Response) -> None:
    """A repeated Idempotency-Key with the same body answers 200, not 201 (SPEC C11)."""
    if not outcome.result.created:
        response.status_code = 200


def says_what_changed(review: ReviewReport) -> None:
    """A Resolved report tells the reporter what changed (docs/reports.md): a change or a link."""
    if review.status == "Resolved" and is_blank(review.change or "") and review.link is None:
        raise Refused("a Resolved report says what changed: send change or link", field="change")


def report_routes(http: Http, *mounted: APIRouter) -> APIRouter:
    """``mounted``: routers of the same prefix kept in modules of their own (annotations)."""
    router = APIRouter(prefix="/factory/reports", tags=["reports"])
    for inner in mounted:
        router.include_router(inner)

    @router.post(
        "",
        status_code=201,
        response_model=ReportWritten,
        responses={200: {"model": ReportWritten, "description": "A replay"}, **WRITE_ERRORS},
        openapi_extra=body(DraftReport, {"category": "idea", "message": "Export as PDF"}),
    )
    async def draft_report(
        request: Request,
        principal: Annotated[Principal, Depends(http.scope(WRITE))],
        response: Response,
        idempotency_key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Draft a report (a preview: nowhere counted or handed over until submitted). With an
        ``Idempotency-Key``, the same key and body answer the same report (200) and another
        body is a conflict (409), as feedback does (SPEC C11)."""
        command = await read_command(request, DraftReport, STAMPED_REPORT_FIELDS)
        outcome = await http.execute(command, principal, command_id(idempotency_key))
        replayed(outcome, response)
        return answer(http.position(outcome, principal), outcome)

    @router.post(
        "/wrong-answer",
        status_code=201,
        response_model=WrongAnswerDrafted,
        responses={200: {"model": WrongAnswerDrafted, "description": "A replay"}, **WRITE_ERRORS},
        openapi_extra=body(ComposeWrongAnswer, WRONG_ANSWER_EXAMPLE),
    )
    async def compose_wrong_answer(
        request: Request,
        principal: Annotated[Principal, Depends(http.scope(WRITE))],
        response: Response,
        idempotency_key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Draft a wrong-answer report from the reply record and the evidence check; the
        labelled block is composed here (SPEC W04–W13) and returned for the preview.
        Idempotent like a draft (SPEC C11)."""
        command = await read_command(request, ComposeWrongAnswer, STAMPED_REPORT_FIELDS)
        outcome = await http.execute(command, principal, command_id(idempotency_key))
        replayed(outcome, response)
        return answer(
            http.position(outcome, principal),
            outcome,
            kind=outcome.result.kind,
            extraContext=outcome.result.extra_context,
        )

    @router.post("/{report_id:uuid}/submit", response_model=ReportSubmitted, responses=WRITE_ERRORS)
    async def submit_report(
        report_id: UUID,
        request: Request,
        principal: Annotated[Principal, Depends(http.scope(WRITE))],
        idempotency_key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Submit a draft: it is handed over (SPEC §3.2) or kept in the Inbox. Takes no body.
        With an ``Idempotency-Key``, a repeat answers the report as it is now (SPEC C11)."""
        await no_body(request)
        outcome = await http.execute(
            SubmitReport(report_id=report_id), principal, f"submit/{report_id}", idempotency_key
        )
        return answer(
            http.position(outcome, principal),
            outcome,
            handedOver=outcome.result.status == "HandedOver",
        )

    @router.post(
        "/{report_id:uuid}/review",
        response_model=ReportWritten,
        responses=WRITE_ERRORS,
        openapi_extra=body(ReviewReport, {"status": "Resolved", "change": "Search the profile."}),
    )
    async def review_report(
        report_id: UUID,
        request: Request,
        principal: Annotated[Principal, Depends(http.scope(WRITE))],
        idempotency_key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Move a report New → Triaged → Resolved / WontFix; ``reviewedBy`` is the caller.
        With an ``Idempotency-Key``, the same key and body answer the report as it is now
        (200) and decide nothing again; another body under it is a 409 (SPEC C11)."""
        review = await read_command(request, ReviewReport, STAMPED_REPORT_FIELDS)
        says_what_changed(review)
        command = ReviewReportCommand(report_id=report_id, review=review)
        outcome = await http.execute(
            command, principal, command_id(idempotency_key), idempotency_key
        )
        return answer(http.position(outcome, principal), outcome)

    @router.get("/inbox", response_model=InboxPage, responses=READ_ERRORS)
    async def inbox(
        principal: Annotated[Principal, Depends(http.reading(READ))],
        status: ReviewStatus | None = None,
        category: Category | None = None,
        kind: Kind | None = None,
        agent: Annotated[str | None, Query(max_length=512)] = None,
        addressee: Annotated[str | None, Query(max_length=512)] = None,
        submitted_before: Annotated[Instant | None, Query(alias="submittedBefore")] = None,
        submitted_after: Annotated[Instant | None, Query(alias="submittedAfter")] = None,
        before: Before = None,
        limit: Limit = PAGE,
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """Submitted reports that were not handed over (and hand-overs nobody received)."""
        await http.read_at("inbox", min_position, principal)
        where = InboxFilter(
            status, category, kind, agent, addressee, submitted_before, submitted_after
        )
        items, next_before = await list_inbox(
            http.pool,
            principal.tenant_id,
            where,
            before=http.cursor(before, principal),
            limit=limit,
        )
        sealed = [http.with_position(item, principal) for item in items]
        return {"items": sealed, "next": http.sealed(next_before, principal)}

    @router.get(
        "/inbox/export",
        response_class=StreamingResponse,
        responses={**EXPORT_ANSWERS, **READ_ERRORS},
    )
    async def export_inbox(
        request: Request,
        principal: Annotated[Principal, Depends(http.reading(READ))],
        format: FormatParameter = "csv",
        status: ReviewStatus | None = None,
        category: Category | None = None,
        kind: Kind | None = None,
        agent: Annotated[str | None, Query(max_length=512)] = None,
        addressee: Annotated[str | None, Query(max_length=512)] = None,
        submitted_before: Annotated[Instant | None, Query(alias="submittedBefore")] = None,
        submitted_after: Annotated[Instant | None, Query(alias="submittedAfter")] = None,
    ) -> StreamingResponse:
        """The Inbox's reports under the same filters, all of them, newest change first, each
        with its lifecycle, as CSV or JSON Lines, streamed (decisions D210–D212). Granting it
        is a row of the audit."""
        where = InboxFilter(
            status, category, kind, agent, addressee, submitted_before, submitted_after
        )
        export = reports_export(principal.tenant_id, where)
        return export_download(http, request, export, format, principal)

    @router.get("/mine", response_model=MyReportsPage, responses=READ_ERRORS)
    async def mine(
        principal: Annotated[Principal, Depends(http.reading(READ, READERS))],
        status: Annotated[ReportStatus | None, Query()] = None,
        before: Before = None,
        limit: Limit = PAGE,
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """The caller's own reports, drafts included, with their outcome: ``status`` and,
        under ``review``, what changed (``change``, ``link``) or why not (``reason``). Newest
        change first, paged with ``before`` = the ``next`` of the page before. Another
        person's reports never appear here (decisions D51)."""
        await http.read_at("inbox", min_position, principal)
        items, next_before = await list_mine(
            http.pool,
            principal.tenant_id,
            principal.subject,
            status=status,
            before=http.cursor(before, principal),
            limit=limit,
        )
        sealed = [http.with_position(item, principal) for item in items]
        return {"items": sealed, "next": http.sealed(next_before, principal)}

    @router.get("/{report_id:uuid}", response_model=ReportDetail, responses=READ_ERRORS)
    async def get_one(
        report_id: UUID,
        principal: Annotated[Principal, Depends(http.reading(READ, READERS))],
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """One report, with its parsed labelled block: a submitted one of the tenant, or a draft
        of the caller's own (another person's draft is absent). A caller who is only a
        Requester reads their own reports: another's is absent to them, a 404 like an id
        that names no report (decisions D100)."""
        await http.read_at("inbox", min_position, principal)
        report = await get_report(
            http.pool, principal.tenant_id, report_id, reader=principal.subject
        )
        # A Requester alone reads their own reports only (decisions D23); another's answers
        # as a made-up id does, so the ids of others' reports cannot be told apart (D100).
        if report is None or not reads_report(
            principal.roles, principal.subject, report["reporter"]
        ):
            raise NotFound(f"no report {report_id}", reportId=str(report_id))
        report["lifecycle"] = await report_lifecycle(http.pool, report_id)
        report["annotations"] = await annotations_of(
            http.pool,
            report_id,
            notes=reads_notes(principal.roles, principal.subject, report["reporter"]),
            schema=INBOX_SCHEMA,
        )
        return http.with_position(report, principal)

    return router
