"""Commands from other services on a real Kafka broker: applied exactly once
in effect, decided by their identity (the tenant's source + id), never by offsets; poison to
the DLT."""

import asyncio
import socket
import uuid
from datetime import UTC, datetime
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient

from contracts import topics
from services.kafka.inbound import InboundConsumer
from services.processes.bootstrap import Runtime
from services.processes.contexts import SUBSCRIPTIONS
from tests.integration.test_relay import forward
from tests.kafka_peer import (
    consume,
    feedback_recorded,
    inbound,
    produce,
    record_feedback_event,
    settled,
)

DATA = {"projectId": "p", "subjectKind": "memory", "subjectRef": "m-1", "kind": "escalation"}


def topic(runtime: Runtime, name: str) -> str:
    return runtime.settings.topic_prefix + name


async def test_a_command_message_is_applied_once_even_when_its_batch_is_redelivered(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    await kafka_runtime.ensure_topics()
    command_topic = topic(kafka_runtime, topics.RECORD_FEEDBACK)
    messages = [
        record_feedback_event("tenant-k", "svc-a", {**DATA, "subjectRef": f"m-{i}"})
        for i in range(50)
    ]
    await produce(kafka_bootstrap, command_topic, messages[:25], key=b"a")
    await produce(kafka_bootstrap, command_topic, messages[25:], key=b"b")
    async with inbound(kafka_runtime) as consumer:
        await settled(consumer, 50)
    assert (consumer.applied, await feedback_recorded(kafka_runtime)) == (50, 50)
    # A consumer restarted before it committed its offsets reads the same batches again (here:
    # a consumer group without offsets); the receipts committed with the events say applied.
    kafka_runtime.settings.inbound_group_id = f"again-{uuid.uuid4().hex[:6]}"
    # The same CloudEvent produced twice (a neighbour's retry) is one command too.
    await produce(kafka_bootstrap, command_topic, messages[:1], key=b"c")
    async with inbound(kafka_runtime) as again:
        await settled(again, 51)
    assert (again.applied, again.repeated) == (0, 51)
    assert await feedback_recorded(kafka_runtime) == 50
    # The partition's position rode with the batches: one tracking record per partition.
    recorder = kafka_runtime.store.process_recorder
    positions = [
        recorder.max_tracking_id(f"{command_topic}:{p}")
        for p in range(kafka_runtime.settings.topic_partitions)
    ]
    assert sorted(p for p in positions if p is not None)[-1] >= 24


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
            b"[" * 100_000 + b"]" * 100_000,  # past every parser's nesting: it once stopped all
            record_feedback_event("tenant-k", "svc-a", forged),
            record_feedback_event("tenant-k", "svc-a", missing_artifact),
            record_feedback_event("tenant-k", "svc-a", DATA),
        ],
        key=b"same-partition",
    )
    async with inbound(kafka_runtime) as consumer:
        await settled(consumer, 5)
    assert (consumer.applied, consumer.dead_lettered) == (1, 4)
    assert await feedback_recorded(kafka_runtime) == 1
    dead = await consume(kafka_bootstrap, topics.dead_letter(command_topic), 4)
    dead.sort(key=lambda m: int(dict(m.headers)["dlt-original-offset"]))
    assert dead[0].value == b"{not json"  # the original, unchanged
    headers = [dict(m.headers) for m in dead]
    assert headers[0]["dlt-field"] == b"value"
    assert (headers[1]["dlt-field"], b"nests too deeply" in headers[1]["dlt-reason"]) == (
        b"value",
        True,
    )
    assert headers[2]["dlt-field"] == b"givenBy"
    assert b"stamped" in headers[2]["dlt-reason"]
    assert headers[3]["dlt-field"] == b"commentRef"  # the same checks as over HTTP
    assert headers[3]["content-type"] == b"application/cloudevents+json"  # originals kept
    for h, offset in zip(headers, (b"0", b"1", b"2", b"3"), strict=True):
        assert h["dlt-original-topic"] == command_topic.encode()
        assert h["dlt-original-offset"] == offset
        assert "dlt-original-partition" in h
        assert h["dlt-error"] == b"refused"


async def test_a_message_whose_reading_fails_unexpectedly_is_dead_lettered_alone(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    """One bad message stops nothing but itself, whatever fails in reading it: here the
    consumer's clock, failing once, stands for a failure of our own reading that is no
    refusal (a RecursionError once stopped the whole consumer, found by attacking it)."""
    await kafka_runtime.ensure_topics()
    command_topic = topic(kafka_runtime, topics.RECORD_FEEDBACK)
    await produce(
        kafka_bootstrap,
        command_topic,
        [
            record_feedback_event("tenant-k", "svc-a", {**DATA, "subjectRef": f"m-{n}"})
            for n in range(2)
        ],
        key=b"same-partition",
    )
    readings = 0

    def clock() -> datetime:
        nonlocal readings
        readings += 1
        if readings == 1:
            raise RuntimeError("a failure of the reading itself")
        return datetime.now(UTC)

    settings = kafka_runtime.settings
    consumer = InboundConsumer(
        kafka_runtime.bus,
        kafka_runtime.store,
        kafka_runtime.pool,
        SUBSCRIPTIONS,
        bootstrap=kafka_bootstrap,
        group_id=settings.inbound_group_id,
        topic_prefix=settings.topic_prefix,
        clock=clock,
    )
    await consumer.start()
    try:
        await settled(consumer, 2)
    finally:
        await consumer.stop()
    assert (consumer.applied, consumer.dead_lettered) == (1, 1)
    assert await feedback_recorded(kafka_runtime) == 1
    [dead] = await consume(kafka_bootstrap, topics.dead_letter(command_topic), 1)
    headers = dict(dead.headers)
    assert (headers["dlt-field"], headers["dlt-original-offset"]) == (b"value", b"0")
    assert b"RuntimeError" in headers["dlt-reason"]


async def recreate(bootstrap: str, runtime: Runtime, name: str) -> None:
    """Delete the topic and create it again (as ``make down`` wiping Kafka's data does)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.delete_topics([name])
    finally:
        await admin.close()
    async with asyncio.timeout(60):
        while True:  # the broker refuses to create it while the deletion is under way
            try:
                await runtime.ensure_topics()
                return
            except RuntimeError:
                await asyncio.sleep(0.5)


async def test_after_the_topic_is_recreated_new_commands_apply_and_old_ones_replayed_do_not(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    """A command is applied or not by its identity, never by (topic:partition, offset), which
    after a Kafka reset would skip new commands silently."""
    await kafka_runtime.ensure_topics()
    command_topic = topic(kafka_runtime, topics.RECORD_FEEDBACK)

    def commands(n: int, tag: str) -> list[bytes]:
        return [
            record_feedback_event("tenant-k", "svc-a", {**DATA, "subjectRef": f"{tag}-{i}"})
            for i in range(n)
        ]

    old = commands(30, "old")
    await produce(kafka_bootstrap, command_topic, old, key=b"k")
    async with inbound(kafka_runtime) as consumer:
        await settled(consumer, 30)
    assert await feedback_recorded(kafka_runtime) == 30
    await recreate(kafka_bootstrap, kafka_runtime, command_topic)
    # Offsets start again at 0, below the recorded position of the same partition.
    await produce(kafka_bootstrap, command_topic, commands(30, "new") + old, key=b"k")
    async with inbound(kafka_runtime) as consumer:
        await settled(consumer, 60)
    assert (consumer.applied, consumer.repeated) == (30, 30)
    assert await feedback_recorded(kafka_runtime) == 60


async def test_a_message_that_keeps_failing_is_parked_and_the_partition_moves_on(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    """A handler that always fails is not retried forever: the reader moves on. Here
    one message's reference check fails for a reason of its own (its table is away)
    while its neighbours, before and after it in the partition, need no such check."""
    await kafka_runtime.ensure_topics()
    command_topic = topic(kafka_runtime, topics.RECORD_FEEDBACK)
    await kafka_runtime.pool.execute("ALTER TABLE artifacts RENAME TO artifacts_away")
    with_artifact = {**DATA, "kind": "comment", "commentRef": "artifact:sha256:" + "1" * 64}
    await produce(
        kafka_bootstrap,
        command_topic,
        [
            record_feedback_event("tenant-k", "svc-a", {**DATA, "subjectRef": "before"}),
            record_feedback_event("tenant-k", "svc-a", with_artifact),
            record_feedback_event("tenant-k", "svc-a", {**DATA, "subjectRef": "after"}),
        ],
        key=b"k",
    )
    async with inbound(kafka_runtime) as consumer:
        await settled(consumer, 3)
    assert (consumer.applied, consumer.parked, consumer.dead_lettered) == (2, 1, 0)
    assert (
        await kafka_runtime.pool.fetchval("SELECT count(*) FROM parked WHERE reader = 'inbound'")
        == 1
    )
    row = await kafka_runtime.pool.fetchrow("SELECT * FROM parked WHERE reader = 'inbound'")
    assert (row["topic"], row["offset"], row["code"]) == (command_topic, 1, "failed")
    assert "failed 5 times" in row["error"]
    assert "artifacts" in row["error"]  # the error itself, to judge it by
    assert row["payload_size"] == len(row["head"])  # small: the head is all of it


async def test_an_inbound_consumer_started_while_kafka_is_away_says_so_and_then_consumes(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    """The inbound consumer heartbeats like the log's readers, so status and
    /readyz tell "waiting for Kafka" from "consuming" from "not running"."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    kafka_runtime.settings.kafka_bootstrap_servers = f"127.0.0.1:{port}"
    [before] = await kafka_runtime.health(only=["inbound"])
    assert before.problems == ["not running"]

    async def inbound_health_until(ready: bool) -> Any:
        async with asyncio.timeout(60):
            while True:
                [health] = await kafka_runtime.health(only=["inbound"])
                if health.ok == ready and health.problems != ["not running"]:
                    return health
                await asyncio.sleep(0.2)

    async with inbound(kafka_runtime) as consumer:
        waiting = await inbound_health_until(ready=False)
        assert "Kafka" in waiting.state, waiting
        door = await forward(port, kafka_bootstrap)
        await produce(
            kafka_bootstrap,
            topic(kafka_runtime, topics.RECORD_FEEDBACK),
            [record_feedback_event("tenant-k", "svc-a", DATA)],
        )
        await settled(consumer, 1)
        consuming = await inbound_health_until(ready=True)
        assert (consuming.state, consuming.lag) == ("consuming", 0)
    door.close()
