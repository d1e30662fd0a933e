"""What the feedback context consumes from Kafka (its HTTP side is ``api.py``)."""

import asyncpg

from contracts import topics
from contracts.envelope import RecordFeedbackMessage
from contracts.feedback import STAMPED_FIELDS, RecordFeedback, artifact_refs
from services.bus.issued import Issued
from services.kafka.inbound.subscription import Subscription
from services.store.artifacts import check_references


async def referenced_artifacts_exist(pool: asyncpg.Pool, issued: Issued) -> None:
    """The same reference check as over HTTP (SPEC C06, C08)."""
    command = issued.command
    assert isinstance(command, RecordFeedback)
    await check_references(pool, issued.tenant_id, artifact_refs(command))


SUBSCRIPTIONS = (
    Subscription(
        topic=topics.RECORD_FEEDBACK,
        envelope=RecordFeedbackMessage,
        title="RecordFeedback",
        description="Record feedback, sent by another service as a CloudEvent.",
        strict=True,
        stamped=STAMPED_FIELDS,
        scope="factory.feedback.write",  # as POST /factory/feedback (SPEC C11)
        admit=referenced_artifacts_exist,
    ),
)
