"""The relay on a real Kafka broker: CloudEvents out, at-least-once, one active relay."""

import asyncio
import dataclasses
import json
import socket
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
from aiokafka.partitioner import DefaultPartitioner
from pydantic import BaseModel, Field

from contracts import topics
from contracts.feedback import RecordFeedback
from services.bus.issued import Issued
from services.followers.follower import Follower
from services.followers.parked import list_parked, release
from services.followers.positions import read_position
from services.kafka.relay import Relay
from services.processes.bootstrap import Runtime
from services.processes.published import PUBLICATIONS
from tests.conftest import Keys
from tests.kafka_peer import consume


async def record(runtime: Runtime, n: int) -> list[str]:
    batch = uuid.uuid4().hex[:6]
    ids = []
    for i in range(n):
        outcome = await runtime.bus.execute(
            Issued(
                RecordFeedback.model_validate(
                    {
                        "projectId": "p",
                        "subjectKind": "attempt",
                        "subjectRef": f"a{i}",
                        "kind": "rating",
                        "rating": 5,
                    }
                ),
                "tenant-r",
                "alice",
                f"relay-{batch}-{i}",
                datetime.now(UTC),
            )
        )
        ids.append(str(outcome.result.feedback_id))
    return ids


def relay_for(runtime: Runtime, **overrides: Any) -> Relay:
    assert runtime.settings.kafka_bootstrap_servers
    options: dict[str, Any] = {
        "source": "urn:feedbackloop:test",
        "topic_prefix": runtime.settings.topic_prefix,
        "prepare": runtime.ensure_topics,
    }
    return Relay(
        overrides.pop("bootstrap", runtime.settings.kafka_bootstrap_servers),
        overrides.pop("publications", PUBLICATIONS),
        **{**options, **overrides},
    )


def follower_for(runtime: Runtime, relay: Relay) -> Follower:
    return Follower(runtime.store, runtime.pool, relay, idle_poll=0.2, backoff=0.05)


async def published(relays: list[Relay], count: int) -> None:
    async with asyncio.timeout(60):
        while sum(r.published for r in relays) < count:
            await asyncio.sleep(0.05)


async def run_until_published(runtime: Runtime, relay: Relay, count: int) -> None:
    stop = asyncio.Event()
    task = asyncio.create_task(follower_for(runtime, relay).run(stop))
    try:
        await published([relay], count)
    finally:
        stop.set()
        await task


async def test_every_feedback_is_published_as_a_cloudevent_keyed_by_its_id(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    await kafka_runtime.ensure_topics()
    ids = await record(kafka_runtime, 5)
    await run_until_published(kafka_runtime, relay_for(kafka_runtime), 5)
    topic = kafka_runtime.settings.topic_prefix + topics.FEEDBACK_RECORDED
    messages = await consume(kafka_bootstrap, topic, 5)
    assert sorted(m.key.decode() for m in messages) == sorted(ids)
    for message in messages:
        envelope = json.loads(message.value)
        assert dict(message.headers)["content-type"] == b"application/cloudevents+json"
        assert envelope["type"] == "evaluation.feedback.v1.FeedbackRecorded"
        assert envelope["subject"] == envelope["data"]["feedbackId"] == message.key.decode()
        assert envelope["source"] == "urn:feedbackloop:test"
        assert envelope["data"]["tenantId"] == "tenant-r"
    assert (
        await read_position(kafka_runtime.pool, "relay")
        == kafka_runtime.store.recorder.max_notification_id()
    )


async def test_a_relay_that_crashed_before_saving_its_position_republishes_the_same_ids(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    await kafka_runtime.ensure_topics()
    await record(kafka_runtime, 4)
    await run_until_published(kafka_runtime, relay_for(kafka_runtime), 4)
    # The crash: Kafka had acknowledged, the position was never written.
    await kafka_runtime.pool.execute(
        "UPDATE reader_positions SET position = 0 WHERE reader = 'relay'"
    )
    await run_until_published(kafka_runtime, relay_for(kafka_runtime), 4)
    topic = kafka_runtime.settings.topic_prefix + topics.FEEDBACK_RECORDED
    messages = await consume(kafka_bootstrap, topic, 8)
    assert len(messages) == 8  # at-least-once: published twice …
    ids = {json.loads(m.value)["id"] for m in messages}
    assert len(ids) == 4  # … but a consumer de-duplicating on the CloudEvent id sees 4 effects


async def test_only_one_relay_is_active_at_a_time(kafka_runtime: Runtime) -> None:
    await kafka_runtime.ensure_topics()
    await record(kafka_runtime, 3)
    first, second = relay_for(kafka_runtime), relay_for(kafka_runtime)
    stop = asyncio.Event()
    active = asyncio.create_task(follower_for(kafka_runtime, first).run(stop))
    standby = None
    try:
        await published([first], 3)
        standby = asyncio.create_task(follower_for(kafka_runtime, second).run(stop))
        await record(kafka_runtime, 2)
        await published([first, second], 5)
    finally:
        stop.set()
        await asyncio.gather(active, *([standby] if standby else []))
    assert (first.published, second.published) == (5, 0)


async def test_a_relay_that_loses_its_session_takes_the_lock_again_and_goes_on(
    kafka_runtime: Runtime,
) -> None:
    await kafka_runtime.ensure_topics()
    await record(kafka_runtime, 2)
    relay = relay_for(kafka_runtime)
    stop = asyncio.Event()
    task = asyncio.create_task(follower_for(kafka_runtime, relay).run(stop))
    try:
        await published([relay], 2)
        # The session holding the advisory lock dies (a failover, a network cut).
        # Only this test's database: the server may be shared, and pg_locks shows every
        # database's advisory locks.
        # Its session holds two: its leadership and its layout's (decisions D273).
        killed = await kafka_runtime.pool.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM (SELECT DISTINCT l.pid FROM pg_locks l "
            "JOIN pg_database d ON d.oid = l.database "
            "WHERE l.locktype = 'advisory' AND d.datname = current_database()) AS holders"
        )
        assert killed == 1
        await record(kafka_runtime, 2)
        await published([relay], 4)
    finally:
        stop.set()
        await task


async def forward(port: int, to: str) -> asyncio.Server:
    """A TCP door to the broker on ``port``: Kafka is "away" until it opens."""
    host, target_port = to.rsplit(":", 1)

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()

    async def on_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection(host, int(target_port))
        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))

    return await asyncio.start_server(on_client, "127.0.0.1", port)


async def test_a_relay_started_while_kafka_is_away_waits_and_then_publishes_everything(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    """No silent death; the state says what it waits for."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ids = await record(kafka_runtime, 3)
    relay = relay_for(kafka_runtime, bootstrap=f"127.0.0.1:{port}")
    follower = follower_for(kafka_runtime, relay)
    stop = asyncio.Event()
    task = asyncio.create_task(follower.run(stop))
    door = None
    try:
        async with asyncio.timeout(30):
            while not follower.status.state.startswith("waiting for Kafka"):
                await asyncio.sleep(0.05)
        assert relay.published == 0
        door = await forward(port, kafka_bootstrap)
        await published([relay], 3)
    finally:
        stop.set()
        await task
        if door is not None:
            door.close()
    topic = kafka_runtime.settings.topic_prefix + topics.FEEDBACK_RECORDED
    messages = await consume(kafka_bootstrap, topic, 3)
    assert sorted(m.key.decode() for m in messages) == sorted(ids)


async def test_an_event_the_relay_cannot_publish_is_parked_and_the_rest_flows(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    """One bad event never stops every tenant's publication; after a fix,
    `parked retry` publishes it."""
    poison = (await record(kafka_runtime, 1))[0]
    broken = {poison}
    publication, *_ = PUBLICATIONS

    def mapping(event: Any) -> Any:
        if str(event.originator_id) in broken:
            raise ValueError("this payload does not map")
        return publication.to_contract(event)

    relay = relay_for(
        kafka_runtime,
        publications=[dataclasses.replace(publication, to_contract=mapping)],
    )
    follower = follower_for(kafka_runtime, relay)
    later = await record(kafka_runtime, 4)
    stop = asyncio.Event()
    task = asyncio.create_task(follower.run(stop))
    try:
        await published([relay], 4)
        (parked,) = await list_parked(kafka_runtime.pool, "relay")
        assert str(parked.originator_id) == poison
        assert "ValueError: this payload does not map" in parked.error
        broken.clear()  # the fix
        assert await release(kafka_runtime.pool, "relay") == 1
        await published([relay], 5)
        assert await list_parked(kafka_runtime.pool, "relay") == []
    finally:
        stop.set()
        await task
    topic = kafka_runtime.settings.topic_prefix + topics.FEEDBACK_RECORDED
    messages = await consume(kafka_bootstrap, topic, 5)
    assert sorted(m.key.decode() for m in messages) == sorted([poison, *later])


async def test_the_trace_of_a_request_travels_to_the_message_the_relay_publishes(
    kafka_runtime: Runtime, kafka_bootstrap: str, keys: Keys
) -> None:
    """W3C traceparent, HTTP → the event's metadata → Kafka header and the
    CloudEvent's extension attribute."""
    traceparent = f"00-{uuid.uuid4().hex}-{uuid.uuid4().hex[:16]}-01"
    transport = httpx.ASGITransport(app=kafka_runtime.app())
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        answer = await client.post(
            "/factory/feedback",
            json={
                "projectId": "p",
                "subjectKind": "run",
                "subjectRef": "traced",
                "kind": "rating",
                "rating": 4,
            },
            headers={"Authorization": f"Bearer {keys.a}", "traceparent": traceparent},
        )
        assert answer.status_code == 201, answer.text
        untraced = await client.post(
            "/factory/feedback",
            json={
                "projectId": "p",
                "subjectKind": "run",
                "subjectRef": "x",
                "kind": "rating",
                "rating": 4,
            },
            headers={"Authorization": f"Bearer {keys.a}", "traceparent": "not-a-trace"},
        )
        assert untraced.status_code == 201, untraced.text
    await run_until_published(kafka_runtime, relay_for(kafka_runtime), 2)
    topic = kafka_runtime.settings.topic_prefix + topics.FEEDBACK_RECORDED
    messages = await consume(kafka_bootstrap, topic, 2)
    traces = {
        json.loads(m.value)["data"]["subjectRef"]: (
            dict(m.headers).get("traceparent", b"").decode() or None,
            json.loads(m.value).get("traceparent"),  # the CloudEvents extension attribute
        )
        for m in messages
    }
    assert traces == {"traced": (traceparent, traceparent), "x": (None, None)}


async def test_each_message_lands_in_the_partition_a_plain_send_would_pick(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    """The relay fills a record batch per partition itself; an aggregate's events
    must still go where aiokafka's ``send()`` (its DefaultPartitioner) sends them, in log
    order."""
    await kafka_runtime.ensure_topics()
    ids = await record(kafka_runtime, 12)
    await run_until_published(kafka_runtime, relay_for(kafka_runtime), 12)
    topic = kafka_runtime.settings.topic_prefix + topics.FEEDBACK_RECORDED
    messages = await consume(kafka_bootstrap, topic, 12)
    partitions = list(range(kafka_runtime.settings.topic_partitions))
    assert len(partitions) > 1
    assert sorted(m.key.decode() for m in messages) == sorted(ids)
    for message in messages:
        assert message.partition == DefaultPartitioner()(message.key, partitions, partitions)
    for partition in partitions:  # each partition holds its events in the order recorded
        keys = [
            m.key.decode()
            for m in sorted(messages, key=lambda m: m.offset)
            if m.partition == partition
        ]
        assert keys == [i for i in ids if i in keys]


class Padded(BaseModel):
    """A payload that can be made too large for Kafka."""

    feedback_id: str = Field(alias="feedbackId")
    padding: str


async def test_a_message_over_the_size_limit_is_parked_and_the_rest_flows(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    """A message Kafka would refuse is the event's own
    problem, parked; the events around it, in the same batch, are published."""
    await kafka_runtime.ensure_topics()
    first = await record(kafka_runtime, 2)
    poison = (await record(kafka_runtime, 1))[0]
    later = await record(kafka_runtime, 2)
    publication, *_ = PUBLICATIONS

    def mapping(event: Any) -> Padded:
        size = 2 * 1024 * 1024 if str(event.originator_id) == poison else 10
        return Padded(feedbackId=str(event.originator_id), padding="x" * size)

    relay = relay_for(
        kafka_runtime,
        publications=[dataclasses.replace(publication, payload=Padded, to_contract=mapping)],
    )
    await run_until_published(kafka_runtime, relay, 4)
    (parked,) = await list_parked(kafka_runtime.pool, "relay")
    assert str(parked.originator_id) == poison
    assert "MessageSizeTooLargeError" in parked.error
    topic = kafka_runtime.settings.topic_prefix + topics.FEEDBACK_RECORDED
    messages = await consume(kafka_bootstrap, topic, 4)
    assert sorted(m.key.decode() for m in messages) == sorted([*first, *later])
