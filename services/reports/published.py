"""Which report events leave the service: hand-overs, agent-owner notifications and the
reporter's notice of the outcome."""

from typing import Any

from contracts import topics
from contracts.reports import AgentOwnerNotified, ReportHandedOver, ReportResolved, SidePanel
from services.kafka.publication import Publication
from services.reports.domain import Report


def report_handed_over(event: Any) -> ReportHandedOver:
    return ReportHandedOver(
        report_id=event.originator_id,
        tenant_id=event.tenant_id,
        category=event.category,
        report_path=f"/factory/reports/{event.originator_id}",
        side_panel=SidePanel(thread=event.thread, message=event.message_ref),
    )


def agent_owner_notified(event: Any) -> AgentOwnerNotified:
    return AgentOwnerNotified(
        report_id=event.originator_id,
        tenant_id=event.tenant_id,
        kind=event.kind,
        agent=event.agent,
        addressee=event.addressee,
    )


def report_resolved(event: Any) -> ReportResolved:
    """The outcome by reference: whom to tell and the review's words are read at reportPath
    (decisions D139, as D74's hand-over)."""
    return ReportResolved(
        report_id=event.originator_id,
        tenant_id=event.tenant_id,
        outcome=event.outcome,
        report_path=f"/factory/reports/{event.originator_id}",
    )


HAND_OVER = Publication(
    event=Report.HandedOver,
    topic=topics.FEEDBACK_HANDED_OVER,
    payload=ReportHandedOver,
    to_contract=report_handed_over,
    key="reportId",
    title="FeedbackHandedOver",
    description="A submitted report for engineering triage (SPEC W26, W29), its text by "
    "reference: read it at reportPath (decisions D74).",
)

OWNER_NOTIFIED = Publication(
    event=Report.AgentOwnerNotified,
    topic=topics.AGENT_OWNER_NOTIFIED,
    payload=AgentOwnerNotified,
    to_contract=agent_owner_notified,
    key="reportId",
    title="AgentOwnerNotified",
    description="A report of an agent-owner kind names the agent's owner (SPEC W35).",
)

REPORTER_NOTIFIED = Publication(
    event=Report.ReporterNotified,
    topic=topics.REPORT_RESOLVED,
    payload=ReportResolved,
    to_contract=report_resolved,
    key="reportId",
    title="ReportResolved",
    description="A report was Resolved or closed WontFix: the outcome, for its reporter "
    "(SPEC W33; decisions D51), who and what changed read at reportPath (decisions D139).",
)

PUBLICATIONS: tuple[Publication, ...] = (HAND_OVER, OWNER_NOTIFIED, REPORTER_NOTIFIED)
