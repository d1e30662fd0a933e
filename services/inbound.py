"""Commands and foreign events arriving on Kafka, through FastStream subscribers.

Each message is applied exactly once in effect: its events and the tracking record
``(topic:partition, offset)`` commit together, so a redelivered message is recognised and
skipped. A message that cannot be parsed or is refused goes to ``<topic>.dlt`` with the reason
and its original coordinates, and the partition keeps flowing. FastStream's default ACK_FIRST
would be at-most-once; these subscribers commit the offset only after the message is handled.

Trust boundary: the tenant and the actor ride as CloudEvents extension attributes
(``tenantid``, ``actor``). Whoever may write to a command topic may act for any tenant, so
who may write there is the broker's ACL's business.
"""

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any

import asyncpg
from cloudevents.core.bindings.kafka import KafkaMessage as CloudEventMessage
from cloudevents.core.bindings.kafka import from_structured_event
from eventsourcing.persistence import Tracking
from faststream import AckPolicy
from faststream.kafka import KafkaBroker
from faststream.kafka.annotations import KafkaMessage
from pydantic import BaseModel, WithJsonSchema

from contracts import topics
from contracts.envelope import RecordFeedbackMessage, self_contained_schema
from contracts.feedback import STAMPED_FIELDS, RecordFeedback, artifact_refs
from services.artifacts import check_references
from services.bus import CommandBus, Issued, command_from
from services.errors import DomainError, Refused
from services.store import EventStore

log = logging.getLogger(__name__)

RECORD_FEEDBACK_TYPE = "evaluation.feedback.v1.RecordFeedback"
RETRY_PAUSE_SECONDS = 1.0


# The body is read by ``parse_command``, never by FastStream: a poison message must reach the
# handler (and the dead-letter topic), not fail in the framework's decoding. The schema shown
# in the AsyncAPI document is still the envelope's.
AnyBody = Annotated[bytes, WithJsonSchema(self_contained_schema(RecordFeedbackMessage))]


async def raw_body(message: Any) -> bytes:
    return bytes(message.body)


def parse_command(
    raw: Any, expected_type: str, model: type[BaseModel], clock: Callable[[], datetime]
) -> Issued:
    """A structured-mode CloudEvent carrying a command, as the bus wants it."""
    headers = {k: bytes(v) for k, v in (raw.headers or ())}
    try:
        event = from_structured_event(CloudEventMessage(headers, raw.key, raw.value))
    except Exception as error:
        raise Refused(f"not a structured CloudEvent: {error}", field="value") from None
    if event.get_type() != expected_type:
        raise Refused(f"expected type {expected_type}, got {event.get_type()}", field="type")
    tenant, actor = event.get_extension("tenantid"), event.get_extension("actor")
    for name, value in (("tenantid", tenant), ("actor", actor)):
        if not isinstance(value, str) or not value.strip():
            raise Refused(f"the CloudEvent lacks the {name} attribute", field=name)
    return Issued(
        command=command_from(event.get_data(), model, STAMPED_FIELDS),
        tenant_id=tenant,
        actor=actor,
        command_id=f"ce/{event.get_source()}/{event.get_id()}",
        at=clock(),
        tracking=Tracking(f"{raw.topic}:{raw.partition}", raw.offset),
    )


def dead_letter_headers(raw: Any, error: DomainError) -> dict[str, str]:
    """The original headers, plus why and where from."""
    original = {key: bytes(value).decode(errors="replace") for key, value in raw.headers or ()}
    headers = {
        **original,
        "dlt-error": error.code,
        "dlt-reason": error.message,
        "dlt-original-topic": raw.topic,
        "dlt-original-partition": str(raw.partition),
        "dlt-original-offset": str(raw.offset),
    }
    field = error.details.get("field")
    if field:
        headers["dlt-field"] = str(field)
    return headers


def register_inbound(
    broker: KafkaBroker,
    bus: CommandBus,
    store: EventStore,
    pool: asyncpg.Pool,
    *,
    group_id: str,
    topic_prefix: str = "",
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> None:
    @broker.subscriber(
        topic_prefix + topics.RECORD_FEEDBACK,
        group_id=group_id,
        auto_offset_reset="earliest",
        ack_policy=AckPolicy.NACK_ON_ERROR,
        decoder=raw_body,
        title="RecordFeedback",
        description="Record feedback, sent by another service as a CloudEvent.",
    )
    async def on_record_feedback(body: AnyBody, message: KafkaMessage) -> None:
        raw: Any = message.raw_message  # one ConsumerRecord: this subscriber is not batched
        recorder = store.process_recorder
        if await asyncio.to_thread(
            recorder.has_tracking_id, f"{raw.topic}:{raw.partition}", raw.offset
        ):
            return  # applied before the offset was committed: a redelivery
        try:
            issued = parse_command(raw, RECORD_FEEDBACK_TYPE, RecordFeedback, clock)
            command = issued.command
            assert isinstance(command, RecordFeedback)
            await check_references(pool, issued.tenant_id, artifact_refs(command))
            await bus.execute(issued)
        except DomainError as error:  # refused or unparseable: it would never succeed
            await dead_letter(broker, raw, error)
        except Exception:
            log.exception(
                "record-feedback %s:%s@%s failed; will retry", raw.topic, raw.partition, raw.offset
            )
            await asyncio.sleep(RETRY_PAUSE_SECONDS)
            raise


async def dead_letter(broker: KafkaBroker, raw: Any, error: DomainError) -> None:
    log.warning("dead-lettering %s:%s@%s: %s", raw.topic, raw.partition, raw.offset, error.message)
    await broker.publish(
        raw.value,
        topic=topics.dead_letter(raw.topic),
        key=raw.key,
        headers=dead_letter_headers(raw, error),
    )
