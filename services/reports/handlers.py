"""Command handlers of reports: load, decide, hand back for the bus to append.

The door of a report's facts: a composed report brings its labelled block from the
structured record; free text is parsed here, once, and the facts are stored on ``Drafted``.
"""

from dataclasses import dataclass, replace
from uuid import UUID

from contracts.errors import Conflict, NotFound
from contracts.labelled_block import LabelledBlock, parse
from contracts.reports import (
    ComposeWrongAnswer,
    DraftReport,
    RecordHandOverDelivery,
    RecordReporterNoticeDelivery,
    ReviewReportCommand,
    SubmitReport,
)
from services.bus.decisions import Decision
from services.bus.issued import Issued
from services.permissions.agent_register import maintainers_of
from services.permissions.rules import not_own
from services.reports.domain import Report
from services.reports.report_ids import report_id_for
from services.reports.routing import REGISTERED_MAINTAINERS
from services.reports.wrong_answer import compose_report
from services.store.event_store import EventStore
from services.store.owners import load_owned


@dataclass(frozen=True)
class ReportState:
    report_id: UUID
    status: str
    category: str
    kind: str | None = None
    extra_context: str | None = None
    created: bool = True  # False when an Idempotency-Key repeated an accepted draft


def load(store: EventStore, tenant_id: str, report_id: UUID) -> Report:
    report: Report = load_owned(store, tenant_id, report_id, "report")
    return report


def load_for(store: EventStore, issued: Issued, report_id: UUID) -> Report:
    """The report as the caller may see it: another person's draft is absent."""
    report = load(store, issued.tenant_id, report_id)
    report.check_visible_to(issued.actor)
    return report


def drafted(
    store: EventStore,
    issued: Issued,
    draft: DraftReport,
    facts: LabelledBlock | None,
    asked: ComposeWrongAnswer | None = None,
) -> Decision:
    report_id = report_id_for(issued.tenant_id, f"{issued.actor}/{issued.command_id}")
    report = Report.draft(
        draft,
        report_id=report_id,
        tenant_id=issued.tenant_id,
        reporter=issued.actor,
        at=issued.at,
        command_id=issued.command_id,
        facts=facts,
        prompt=asked.prompt if asked else None,
        context=list(asked.context) if asked else None,
    )
    try:
        existing = load(store, issued.tenant_id, report_id)  # a repeated command
    except NotFound:
        return Decision([report], state(report))
    # SPEC C11: the same key with another body is a conflict, never the first report again.
    if drafted_as(existing) != drafted_as(report):
        raise Conflict(
            "this idempotency key was already used with a different request",
            reportId=str(report_id),
        )
    return Decision([], replace(state(existing), created=False))


def drafted_as(report: Report) -> tuple[object, ...]:
    """What a draft says; a repeated key must say the same."""
    facts = (report.category, report.message, report.thread, report.message_ref)
    said = (report.extra_context, report.prompt, report.context, report.facts, report.serves)
    return (*facts, *said, report.trace_id, report.span_id, report.gen_ai)


def state(report: Report) -> ReportState:
    kind = report.facts.kind if report.facts else None
    return ReportState(report.id, report.status, report.category, kind, report.extra_context)


def draft_report(store: EventStore, issued: Issued) -> Decision:
    assert isinstance(issued.command, DraftReport)
    return drafted(store, issued, issued.command, parse(issued.command.extra_context))


def compose_wrong_answer(store: EventStore, issued: Issued) -> Decision:
    assert isinstance(issued.command, ComposeWrongAnswer)
    agent = issued.command.reply.agent_name
    registered = maintainers_of(store, issued.tenant_id, agent) if agent else ()
    # The Addressee names the register's maintainers by their role, not their ids: the line
    # is copied into the reporter's text, the Inbox and a published notice, where a
    # maintainer's erasure could not reach it (decisions D133). The register says who.
    block, draft = compose_report(issued.command, (REGISTERED_MAINTAINERS,) if registered else ())
    return drafted(store, issued, draft, block, issued.command)


def submit_report(store: EventStore, issued: Issued) -> Decision:
    assert isinstance(issued.command, SubmitReport)
    report = load_for(store, issued, issued.command.report_id)
    report.submit(at=issued.at)
    return Decision([report], state(report))


def review_report(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, ReviewReportCommand)
    report = load_for(store, issued, command.report_id)
    not_own(issued, report.reporter, "reviewing this report")  # SPEC C52, decisions D24
    review = command.review
    report.review(
        review.status,
        reviewed_by=issued.actor,
        at=issued.at,
        change=review.change,
        link=str(review.link) if review.link else None,
        reason=review.reason,
    )
    return Decision([report], state(report))


def record_hand_over_delivery(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, RecordHandOverDelivery)
    report = load(store, issued.tenant_id, command.report_id)
    report.record_delivery(
        at=issued.at, status_code=command.status_code, error=command.error, final=command.final
    )
    return Decision([report], state(report))


def record_reporter_notice_delivery(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, RecordReporterNoticeDelivery)
    report = load(store, issued.tenant_id, command.report_id)
    report.record_notice_delivery(
        at=issued.at, status_code=command.status_code, error=command.error, final=command.final
    )
    return Decision([report], state(report))


def shown(store: EventStore, issued: Issued) -> ReportState:
    """What a report shows now: the answer to a repeated submit or review (the same
    Idempotency-Key and request), which must not be decided again."""
    return state(load(store, issued.tenant_id, issued.command.report_id))  # type: ignore[attr-defined]
