"""Commands from other services on a real Kafka broker: exactly once in effect, poison to DLT."""

import asyncio
import uuid

from contracts import topics
from services.bootstrap import Runtime
from tests.kafka_peer import consume, produce, record_feedback_event

DATA = {"projectId": "p", "subjectKind": "memory", "subjectRef": "m-1", "kind": "escalation"}


async def events_in_store(runtime: Runtime, at_least: int, timeout: float = 60) -> int:
    async with asyncio.timeout(timeout):
        while (count := runtime.store.recorder.max_notification_id() or 0) < at_least:
            await asyncio.sleep(0.1)
    return count


def topic(runtime: Runtime, name: str) -> str:
    return runtime.settings.topic_prefix + name


async def test_a_command_message_is_applied_once_even_when_read_again(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    await kafka_runtime.ensure_topics()
    command_topic = topic(kafka_runtime, topics.RECORD_FEEDBACK)
    message = record_feedback_event("tenant-k", "svc-a", DATA)
    await produce(kafka_bootstrap, command_topic, [message], key=b"k")
    broker = await kafka_runtime.start_inbound()
    assert broker is not None
    try:
        assert await events_in_store(kafka_runtime, 1) == 1
    finally:
        await broker.stop()
    # A consumer that lost its committed offsets reads the message again: its tracking
    # record, committed with its event, says it was applied.
    kafka_runtime.settings.inbound_group_id = f"again-{uuid.uuid4().hex[:6]}"
    # The same CloudEvent produced twice (a neighbour's retry) is one command too.
    await produce(kafka_bootstrap, command_topic, [message], key=b"k")
    broker = await kafka_runtime.start_inbound()
    assert broker is not None
    try:
        await tracked_up_to(kafka_runtime, command_topic, offset=1)
    finally:
        await broker.stop()
    assert kafka_runtime.store.recorder.max_notification_id() == 1


async def tracked_up_to(runtime: Runtime, command_topic: str, offset: int) -> None:
    """Wait until some partition of the topic has applied the message at ``offset``."""
    recorder = runtime.store.process_recorder
    async with asyncio.timeout(60):
        while not any(
            (recorder.max_tracking_id(f"{command_topic}:{p}") or -1) >= offset
            for p in range(runtime.settings.topic_partitions)
        ):
            await asyncio.sleep(0.1)


async def test_a_poison_message_goes_to_the_dead_letter_topic_and_the_next_is_applied(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    await kafka_runtime.ensure_topics()
    command_topic = topic(kafka_runtime, topics.RECORD_FEEDBACK)
    forged = {**DATA, "givenBy": "mallory"}
    missing_artifact = {**DATA, "kind": "comment", "commentRef": "artifact:sha256:" + "0" * 64}
    await produce(
        kafka_bootstrap,
        command_topic,
        [
            b"{not json",
            record_feedback_event("tenant-k", "svc-a", forged),
            record_feedback_event("tenant-k", "svc-a", missing_artifact),
            record_feedback_event("tenant-k", "svc-a", DATA),
        ],
        key=b"same-partition",
    )
    broker = await kafka_runtime.start_inbound()
    assert broker is not None
    try:
        assert await events_in_store(kafka_runtime, 1) == 1
    finally:
        await broker.stop()
    dead = await consume(kafka_bootstrap, topics.dead_letter(command_topic), 3)
    assert dead[0].value == b"{not json"  # the original, unchanged
    headers = [dict(m.headers) for m in dead]
    assert headers[0]["dlt-field"] == b"value"
    assert headers[1]["dlt-field"] == b"givenBy"
    assert b"stamped" in headers[1]["dlt-reason"]
    assert headers[2]["dlt-field"] == b"commentRef"  # the same checks as over HTTP
    assert headers[2]["content-type"] == b"application/cloudevents+json"  # originals kept
    for h, offset in zip(headers, (b"0", b"1", b"2"), strict=True):
        assert h["dlt-original-topic"] == command_topic.encode()
        assert h["dlt-original-offset"] == offset
        assert "dlt-original-partition" in h
