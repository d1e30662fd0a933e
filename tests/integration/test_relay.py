"""The relay on a real Kafka broker: CloudEvents out, at-least-once, one active relay."""

import asyncio
import json
import uuid
from datetime import UTC, datetime

from contracts import topics
from contracts.feedback import RecordFeedback
from services.bootstrap import PUBLICATIONS, Runtime
from services.bus import Issued
from services.relay import Relay
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


def relay_for(runtime: Runtime) -> Relay:
    assert runtime.settings.kafka_bootstrap_servers
    return Relay(
        runtime.store,
        runtime.pool,
        runtime.settings.kafka_bootstrap_servers,
        PUBLICATIONS,
        source="urn:feedbackloop:test",
        topic_prefix=runtime.settings.topic_prefix,
    )


async def published(relays: list[Relay], count: int) -> None:
    async with asyncio.timeout(60):
        while sum(r.published for r in relays) < count:
            await asyncio.sleep(0.05)


async def run_until_published(relay: Relay, count: int) -> None:
    stop = asyncio.Event()
    task = asyncio.create_task(relay.run(stop))
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
    await run_until_published(relay_for(kafka_runtime), 5)
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
        await relay_for(kafka_runtime).position()
        == kafka_runtime.store.recorder.max_notification_id()
    )


async def test_a_relay_that_crashed_before_saving_its_position_republishes_the_same_ids(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    await kafka_runtime.ensure_topics()
    await record(kafka_runtime, 4)
    await run_until_published(relay_for(kafka_runtime), 4)
    # The crash: Kafka had acknowledged, the position was never written.
    await kafka_runtime.pool.execute("UPDATE relay_position SET position = 0")
    await run_until_published(relay_for(kafka_runtime), 4)
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
    active = asyncio.create_task(first.run(stop))
    standby = None
    try:
        await published([first], 3)
        standby = asyncio.create_task(second.run(stop))
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
    task = asyncio.create_task(relay.run(stop, idle_poll=0.2))
    try:
        await published([relay], 2)
        # The session holding the advisory lock dies (a failover, a network cut).
        killed = await kafka_runtime.pool.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_locks WHERE locktype = 'advisory'"
        )
        assert killed == 1
        await record(kafka_runtime, 2)
        await published([relay], 4)
    finally:
        stop.set()
        await task
