"""Each agent's weekly post goes to the hand-over webhook too, where one is configured
(SPEC W123: "through the same route the feedback hand-over uses").

The body is the very CloudEvent the ``digest-posted`` topic carries (same ``id``), so a
receiver de-duplicates either way. Each attempt is recorded on the digest
(``RecordDigestDelivery``, as a service); an agent whose delivery is settled is skipped when a
restart meets its post again. The reader, the signing and the retries are
``services.webhooks``'.
"""

from typing import Any

from contracts.digests import RecordDigestDelivery
from services.digests.domain import Digest
from services.digests.published import POSTED
from services.kafka.publication import cloudevent_id, to_message
from services.webhooks.declared import OutgoingWebhook
from services.webhooks.signed import Attempt


def _cloudevent(event: Any, source: str) -> tuple[bytes, str]:
    body = to_message(POSTED, event, source).value
    return body, cloudevent_id(event.originator_id, event.originator_version)


def _settled(digest: Digest, event: Any) -> bool:
    return event.agent_id in digest.settled


def _attempt(event: Any, attempt: Attempt) -> RecordDigestDelivery:
    return RecordDigestDelivery(
        week=event.week,
        agent_id=event.agent_id,
        status_code=attempt.status_code,
        error=attempt.error,
        final=attempt.final,
    )


DIGEST_WEBHOOK = OutgoingWebhook(
    name="digest-webhook",
    event=Digest.AgentPosted,
    cloudevent=_cloudevent,
    settled=_settled,
    attempt=_attempt,
    as_service=True,
)
