"""Each hand-over goes to engineering triage's webhook too, where one is configured
(``FEEDBACKLOOP_HANDOVER_WEBHOOK_URL``, signed with ``FEEDBACKLOOP_HANDOVER_WEBHOOK_SECRET``).

The body is the very CloudEvent the hand-over topic carries. Each attempt is recorded on the
report (``RecordHandOverDelivery``); a hand-over that was never received puts the report in
the Inbox. The reader, the signing and the retries are ``services.webhooks``'.
"""

from typing import Any

from contracts.reports import RecordHandOverDelivery
from services.kafka.publication import cloudevent_id, to_message
from services.reports.domain import Report
from services.reports.published import HAND_OVER
from services.webhooks.declared import OutgoingWebhook
from services.webhooks.signed import Attempt


def _cloudevent(event: Any, source: str) -> tuple[bytes, str]:
    body = to_message(HAND_OVER, event, source).value
    return body, cloudevent_id(event.originator_id, event.originator_version)


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
    cloudevent=_cloudevent,
    settled=_settled,
    attempt=_attempt,
)
