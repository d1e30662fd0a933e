"""The relay after a point-in-time restore (decisions D49): what it published of events the
store no longer holds is found on the topics, the relay publishes nothing until an operator
acknowledges it, then goes on from its position. The restore is played here as PostgreSQL's
does it: the store and the relay's position both back at an earlier moment (the drill,
tests/e2e/test_restore_drill.py, does it with a real restore)."""

import asyncio
import uuid
from datetime import UTC, datetime

from contracts.feedback import RecordFeedback
from services.bus.issued import Issued
from services.followers.positions import read_position
from services.kafka.divergence import Divergence
from services.processes.bootstrap import Runtime
from services.store.event_store import EVENTS_TABLE
from tests.integration.test_relay import follower_for, published, record, relay_for


async def record_as(runtime: Runtime, command_id: str) -> str:
    """One feedback by alice under this command id: its id derives from it, so the same
    command issued again after a restore makes the same aggregate, version and CloudEvent id."""
    body = {"projectId": "p", "subjectKind": "run", "subjectRef": "r", "kind": "rating"}
    outcome = await runtime.bus.execute(
        Issued(
            RecordFeedback.model_validate({**body, "rating": 4}),
            "tenant-r",
            "alice",
            command_id,
            datetime.now(UTC),
        )
    )
    return str(outcome.result.feedback_id)


def divergence_of(runtime: Runtime) -> Divergence:
    checking = runtime.divergence()
    return Divergence(checking.bootstrap, checking.topics, runtime.store, runtime.pool, recheck=0.1)


async def back_to(runtime: Runtime, position: int) -> None:
    """The store and the relay's position as a restore to ``position`` leaves them."""
    await runtime.pool.execute(f"DELETE FROM {EVENTS_TABLE} WHERE notification_id > $1", position)
    await runtime.pool.execute(
        "UPDATE reader_positions SET position = $1 WHERE reader = 'relay'", position
    )


async def relay_problems(runtime: Runtime) -> list[str]:
    (health,) = await runtime.health(only=["relay"])
    return [p for p in health.problems if "diverged" in p]


async def test_a_relay_finds_what_kafka_holds_beyond_the_restored_store_and_waits_for_an_operator(
    kafka_runtime: Runtime,
) -> None:
    await kafka_runtime.ensure_topics()
    kept = await record(kafka_runtime, 2)
    lost = await record(kafka_runtime, 3)
    divergence = divergence_of(kafka_runtime)
    relay = relay_for(kafka_runtime, divergence=divergence)
    stop = asyncio.Event()
    task = asyncio.create_task(follower_for(kafka_runtime, relay).run(stop))
    try:
        await published([relay], 5)
    finally:
        stop.set()
        await task
    # A restart with nothing lost finds nothing: no false alarm.
    assert await divergence.beyond() == []

    # The restore: back to the moment the two kept feedback were stored.
    head = await kafka_runtime.pool.fetchval(
        f"SELECT max(notification_id) FROM {EVENTS_TABLE} WHERE originator_id::text = ANY($1)",
        kept,
    )
    await back_to(kafka_runtime, head)
    beyond = await divergence.beyond()
    assert sorted(b.subject for b in beyond) == sorted(lost)
    assert {b.why for b in beyond} == {"no stored event has this id"}

    # The relay holds, says why, and publishes nothing, not even what the store takes now.
    await record(kafka_runtime, 1)
    relay = relay_for(kafka_runtime, divergence=divergence)
    follower = follower_for(kafka_runtime, relay)
    stop = asyncio.Event()
    task = asyncio.create_task(follower.run(stop))
    try:
        async with asyncio.timeout(60):  # status and readiness say so (a problem: not ready)
            while not (problems := await relay_problems(kafka_runtime)):
                await asyncio.sleep(0.1)
        assert "diverged" in problems[0]
        assert "feedbackloop restore acknowledge" in problems[0]
        assert relay.published == 0
        assert await read_position(kafka_runtime.pool, "relay") == head

        # The operator acknowledges: the relay goes on from its position.
        assert await divergence.acknowledge(beyond) == len(lost)
        await published([relay], 1)
        assert await divergence.beyond() == []
    finally:
        stop.set()
        await task


async def test_an_event_stored_again_under_a_lost_events_id_is_still_found_beyond_the_store(
    kafka_runtime: Runtime,
) -> None:
    await kafka_runtime.ensure_topics()
    kept = await record_as(kafka_runtime, f"kept-{uuid.uuid4().hex}")
    command = f"lost-{uuid.uuid4().hex}"
    lost = await record_as(kafka_runtime, command)
    divergence = divergence_of(kafka_runtime)
    relay = relay_for(kafka_runtime, divergence=divergence)
    stop = asyncio.Event()
    task = asyncio.create_task(follower_for(kafka_runtime, relay).run(stop))
    try:
        await published([relay], 2)
    finally:
        stop.set()
        await task
    head = await kafka_runtime.pool.fetchval(
        f"SELECT notification_id FROM {EVENTS_TABLE} WHERE originator_id::text = $1", kept
    )
    await back_to(kafka_runtime, head)
    # After the restore the same command comes again: the same aggregate and version, so the
    # same CloudEvent id, but another event (another time). Publishing it would be dropped by
    # a subscriber that de-duplicates on ids.
    assert await record_as(kafka_runtime, command) == lost
    (beyond,) = await divergence.beyond()
    assert beyond.subject == lost
    assert beyond.why == "the stored event of this id is another"
