"""Each hand-over goes to engineering triage's webhook too, where one is configured
(``FEEDBACKLOOP_HANDOVER_WEBHOOK_URL``, signed with ``FEEDBACKLOOP_HANDOVER_WEBHOOK_SECRET``);
so does each reporter's notice of an outcome (``report-resolved``, decisions D51), through the
same route.

The body is the very CloudEvent the topic carries. Each attempt is recorded on the report
(``RecordHandOverDelivery``, ``RecordReporterNoticeDelivery``); a hand-over that was never
received puts the report in the Inbox, a notice never received changes nothing (the outcome
stands, ``GET /factory/reports/mine`` shows it). The reader, the signing and the retries are
``services.webhooks``'.
"""

from typing import Any

from contracts.reports import RecordHandOverDelivery, RecordReporterNoticeDelivery
from services.kafka.publication import Publication, cloudevent_id, to_message
from services.reports.domain import Report
from services.reports.published import HAND_OVER, REPORTER_NOTIFIED
from services.webhooks.declared import OutgoingWebhook
from services.webhooks.signed import Attempt


def _as_published(publication: Publication) -> Any:
    def cloudevent(event: Any, source: str) -> tuple[bytes, str]:
        body = to_message(publication, event, source).value
        return body, cloudevent_id(event.originator_id, event.originator_version)

    return cloudevent


def _settled(report: Report, _: Any) -> bool:
    return report.delivery_settled


def _attempt(event: Any, attempt: Attempt) -> RecordHandOverDelivery:
    return RecordHandOverDelivery(
        report_id=event.originator_id,
        status_code=attempt.status_code,
        error=attempt.error,
        final=attempt.final,
    )


HAND_OVER_WEBHOOK = OutgoingWebhook(
    name="handover-webhook",
    event=Report.HandedOver,
    cloudevent=_as_published(HAND_OVER),
    settled=_settled,
    attempt=_attempt,
)


def _notice_settled(report: Report, _: Any) -> bool:
    return report.notice_settled


def _notice_attempt(event: Any, attempt: Attempt) -> RecordReporterNoticeDelivery:
    return RecordReporterNoticeDelivery(
        report_id=event.originator_id,
        status_code=attempt.status_code,
        error=attempt.error,
        final=attempt.final,
    )


REPORTER_WEBHOOK = OutgoingWebhook(
    name="reporter-webhook",
    event=Report.ReporterNotified,
    cloudevent=_as_published(REPORTER_NOTIFIED),
    settled=_notice_settled,
    attempt=_notice_attempt,
)
