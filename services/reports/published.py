"""Which report events leave the service: hand-overs and agent-owner notifications."""

from typing import Any

from contracts import topics
from contracts.reports import AgentOwnerNotified, ReportHandedOver, SidePanel
from services.kafka.publication import Publication
from services.reports.domain import Report


def report_handed_over(event: Any) -> ReportHandedOver:
    return ReportHandedOver(
        report_id=event.originator_id,
        tenant_id=event.tenant_id,
        category=event.category,
        message=event.message,
        side_panel=SidePanel(thread=event.thread, message=event.message_ref),
        extra_context=event.extra_context,
    )


def agent_owner_notified(event: Any) -> AgentOwnerNotified:
    return AgentOwnerNotified(
        report_id=event.originator_id,
        tenant_id=event.tenant_id,
        kind=event.kind,
        agent=event.agent,
        addressee=event.addressee,
    )


HAND_OVER = Publication(
    event=Report.HandedOver,
    topic=topics.FEEDBACK_HANDED_OVER,
    payload=ReportHandedOver,
    to_contract=report_handed_over,
    key="reportId",
    title="FeedbackHandedOver",
    description="A submitted report for engineering triage (SPEC W26, W29).",
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

PUBLICATIONS: tuple[Publication, ...] = (HAND_OVER, OWNER_NOTIFIED)
