"""The event store and the one command path, on a real PostgreSQL."""

import asyncio
import os
import threading
import uuid
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from eventsourcing.persistence import IntegrityError
from prometheus_client import REGISTRY

from contracts.errors import Conflict
from contracts.feedback import RecordFeedback
from services.bus.command_bus import CommandBus
from services.bus.decisions import Decision, Handler
from services.bus.fast_marking import as_new
from services.bus.issued import Issued
from services.declaration import registry
from services.feedback.context import FEEDBACK
from services.feedback.handlers import record_feedback
from services.processes.bootstrap import Runtime
from services.store.event_store import EVENTS_TABLE, EventStore
from services.store.fast_loop_store import LoopStore
from services.store.opening import StoreMisconfigured, open_store

COMMANDS = registry((FEEDBACK,))  # the feedback context's, as the runtime's bus has them
HANDLERS, CREATES, ALONE = COMMANDS.handlers, COMMANDS.creates, COMMANDS.alone


def issued(tenant: str, command_id: str, rating: int = 3) -> Issued:
    command = RecordFeedback.model_validate(
        {
            "projectId": "p",
            "subjectKind": "run",
            "subjectRef": "r",
            "kind": "rating",
            "rating": rating,
        }
    )
    return Issued(command, tenant, "alice", command_id, datetime.now(UTC))


def count_events(runtime: Runtime) -> int:
    return len(runtime.store.recorder.select_notifications(start=1, limit=100_000))


async def test_concurrent_commands_are_appended_together_each_exactly_once(
    runtime: Runtime,
) -> None:
    outcomes = await asyncio.gather(*(runtime.bus.execute(issued("t", f"c{i}")) for i in range(60)))
    positions = [o.position for o in outcomes]
    assert len(set(positions)) == 60
    assert count_events(runtime) == 60
    assert len({o.result.feedback_id for o in outcomes}) == 60
    assert runtime.bus.transactions < 60  # group commit: several commands per transaction


def bus_sample(name: str, stage: str | None = None) -> float:
    labels = {} if stage is None else {"stage": stage}
    return REGISTRY.get_sample_value(f"feedbackloop_bus_{name}", labels) or 0.0


async def test_the_bus_counts_its_batches_and_times_each_stage(runtime: Runtime) -> None:
    """An operator reads where a command's time goes (waiting to be taken,
    deciding, appending) and how many commands each append carried."""
    stages = ("queued", "decide", "append")
    counts = {stage: bus_sample("seconds_count", stage) for stage in stages}
    batches, commands = bus_sample("batch_commands_count"), bus_sample("batch_commands_sum")
    transactions = runtime.bus.transactions
    await asyncio.gather(*(runtime.bus.execute(issued("t", f"m{i}")) for i in range(40)))
    appended = runtime.bus.transactions - transactions
    assert bus_sample("batch_commands_count") - batches == appended
    assert bus_sample("batch_commands_sum") - commands == 40
    for stage in stages:
        assert bus_sample("seconds_count", stage) - counts[stage] == appended, stage
        assert bus_sample("seconds_sum", stage) > 0, stage


async def test_the_same_command_id_at_once_appends_one_event(runtime: Runtime) -> None:
    """A client retrying while the first attempt is still in flight (SPEC C11)."""
    outcomes = await asyncio.gather(*(runtime.bus.execute(issued("t", "same")) for _ in range(8)))
    assert len({o.result.feedback_id for o in outcomes}) == 1
    assert sum(o.result.created for o in outcomes) == 1
    assert count_events(runtime) == 1


async def test_a_conflict_in_a_batch_fails_only_its_own_command(runtime: Runtime) -> None:
    await runtime.bus.execute(issued("t", "taken", rating=1))
    results = await asyncio.gather(
        runtime.bus.execute(issued("t", "fresh-1")),
        runtime.bus.execute(issued("t", "taken", rating=5)),  # same key, other body
        runtime.bus.execute(issued("t", "fresh-2")),
        return_exceptions=True,
    )
    assert isinstance(results[1], Conflict)
    assert not isinstance(results[0], BaseException)
    assert not isinstance(results[2], BaseException)
    assert count_events(runtime) == 3


async def test_a_retry_after_a_lost_acknowledgement_appends_nothing(runtime: Runtime) -> None:
    first = await runtime.bus.execute(issued("t", "retry-me"))
    again = await runtime.bus.execute(issued("t", "retry-me"))
    assert again.result.feedback_id == first.result.feedback_id
    assert again.position >= first.position
    assert count_events(runtime) == 1


def test_db_functions_are_refused_at_start_up(database_url: str) -> None:
    os.environ["POSTGRES_ENABLE_DB_FUNCTIONS"] = "y"
    try:
        with pytest.raises(StoreMisconfigured, match="POSTGRES_ENABLE_DB_FUNCTIONS"):
            open_store(database_url)
    finally:
        del os.environ["POSTGRES_ENABLE_DB_FUNCTIONS"]


async def test_two_stores_on_one_database_never_append_one_command_twice(
    runtime: Runtime, database_url: str
) -> None:
    """Two API replicas racing on the same idempotency keys: both find the feedback absent
    (one query a batch), both append, the loser conflicts, decides again, looked up this
    time, and agrees."""
    other = await asyncio.to_thread(open_store, database_url)
    try:
        bus2 = CommandBus(other, HANDLERS, creates=CREATES)
        for _ in range(10):
            key = f"race-{uuid.uuid4()}"
            results = await asyncio.gather(
                runtime.bus.execute(issued("t", key)), bus2.execute(issued("t", key))
            )
            assert results[0].result.feedback_id == results[1].result.feedback_id
            assert sorted(r.result.created for r in results) == [False, True]
        await bus2.aclose()
        assert count_events(runtime) == 10
    finally:
        other.close()


async def test_a_command_that_crashes_fails_alone(runtime: Runtime) -> None:
    """An unexpected error in one handler never fails the commands batched with it."""
    from pydantic import BaseModel

    class Explode(BaseModel):
        pass

    def explode(store: object, issued: Issued) -> Decision:
        raise ValueError("boom")

    bus = CommandBus(runtime.store, {**HANDLERS, Explode: explode})
    try:
        results = await asyncio.gather(
            bus.execute(issued("t", "before")),
            bus.execute(Issued(Explode(), "t", "alice", "x", datetime.now(UTC))),
            bus.execute(issued("t", "after")),
            return_exceptions=True,
        )
    finally:
        await bus.aclose()
    assert isinstance(results[1], ValueError)
    assert not isinstance(results[0], BaseException)
    assert not isinstance(results[2], BaseException)
    assert count_events(runtime) == 2


async def test_an_idempotency_key_is_its_senders_own(runtime: Runtime) -> None:
    """The same key from two people in one tenant is two commands, never one merged."""
    first = await runtime.bus.execute(issued("t", "key/shared"))
    other = Issued(first_command(), "t", "bob", "key/shared", datetime.now(UTC))
    second = await runtime.bus.execute(other)
    assert second.result.feedback_id != first.result.feedback_id
    assert second.result.created
    assert count_events(runtime) == 2


def first_command() -> RecordFeedback:
    return RecordFeedback.model_validate(
        {"projectId": "p", "subjectKind": "run", "subjectRef": "r", "kind": "rating", "rating": 3}
    )


def recording_threads(threads: list[int]) -> dict[type, Handler]:
    """The feedback handler, noting the thread each command is decided in."""

    def decide(store: EventStore, issued: Issued) -> Decision:
        threads.append(threading.get_ident())
        return record_feedback(store, issued)

    return {RecordFeedback: decide}


async def test_new_feedback_is_decided_and_appended_on_the_event_loop(
    runtime: Runtime, database_url: str
) -> None:
    """A batch of new feedback asks PostgreSQL through asyncpg and decides on the event loop,
    with no hand-over to a thread; feedback that exists already, or a command under an
    Idempotency-Key (its receipt is looked up by the library), is decided in a thread. Both
    are stored alike."""
    threads: list[int] = []
    loop_store = await LoopStore.open(database_url, runtime.store)
    bus = CommandBus(
        runtime.store,
        recording_threads(threads),
        creates=CREATES,
        loop_store=loop_store,
        alone=ALONE,
    )
    try:
        new = await asyncio.gather(*(bus.execute(issued("t", f"loop-{i}")) for i in range(20)))
        assert set(threads) == {threading.get_ident()}
        threads.clear()
        again = await bus.execute(issued("t", "loop-3"))
        assert threads
        assert threading.get_ident() not in threads
        threads.clear()
        keyed = replace(issued("t", "keyed"), identity="http/t/alice/k", digest="d")
        await bus.execute(keyed)
        assert threads
        assert threading.get_ident() not in threads
        # A repeat batched with a new command (appended on the loop): answered a position
        # that reflects it, the batch's.
        repeat, fresh = await asyncio.gather(
            bus.execute(issued("t", "loop-5")), bus.execute(issued("t", "fresh"))
        )
    finally:
        await bus.aclose()
        await loop_store.close()
    assert [o.result.created for o in new] == [True] * 20
    assert not again.result.created
    assert again.result.feedback_id == new[3].result.feedback_id
    assert len({o.position for o in new}) == 20
    assert not repeat.result.created
    assert new[5].position < repeat.position == fresh.position
    assert count_events(runtime) == 23


async def test_the_loop_store_appends_in_order_and_refuses_a_version_taken(
    runtime: Runtime,
) -> None:
    loop_store = runtime.loop_store  # the one the runtime's bus appends with
    decision = record_feedback(runtime.store, as_new(issued("t", "direct")))
    [event] = decision.created
    stored = runtime.store.mapper.to_stored_event(event)
    other = runtime.store.mapper.to_stored_event(
        record_feedback(runtime.store, as_new(issued("t", "other"))).created[0]
    )
    assert await loop_store.existing([stored.originator_id]) == set()
    ids = await loop_store.append([stored, other])
    assert len(ids) == 2
    assert ids[0] < ids[1]
    assert runtime.store.recorder.max_notification_id() == ids[-1]
    assert await loop_store.existing([stored.originator_id, uuid.uuid4()]) == {stored.originator_id}
    with pytest.raises(IntegrityError):
        await loop_store.append([stored])
    assert count_events(runtime) == 2


async def test_an_append_the_loop_cannot_make_is_made_in_a_thread(
    runtime: Runtime, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The event loop's append waits for the table lock no longer than the store's lock
    timeout; one that fails so (or loses its connection) is appended in a thread with the
    library's retries instead, and the caller never sees the failure."""
    store = await asyncio.to_thread(open_store, database_url, POSTGRES_LOCK_TIMEOUT="1")
    loop_store = await LoopStore.open(database_url, store)
    bus = CommandBus(store, HANDLERS, creates=CREATES, loop_store=loop_store, alone=ALONE)
    try:
        async with runtime.pool.acquire() as holder, holder.transaction():
            await holder.execute(f"LOCK TABLE {EVENTS_TABLE} IN EXCLUSIVE MODE")
            pending = asyncio.ensure_future(bus.execute(issued("t", "locked-out")))
            await asyncio.sleep(1.6)  # the loop's append gave up after 1 s
            assert not pending.done()
        outcome = await pending
    finally:
        await bus.aclose()
        await loop_store.close()
        store.close()
    assert outcome.result.created
    assert count_events(runtime) == 1
    assert "append on the event loop failed" in caplog.text


async def test_writes_never_wait_behind_reads_for_a_connection(runtime: Runtime) -> None:
    """Every connection of the process's pool held (reads waiting for ``minPosition`` hold
    one each): the bus still decides and appends, on connections of its own."""
    held = [await runtime.pool.acquire() for _ in range(runtime.pool.get_max_size())]
    try:
        async with asyncio.timeout(10):
            outcome = await runtime.bus.execute(issued("t", "while-reads-wait"))
    finally:
        for conn in held:
            await runtime.pool.release(conn)
    assert outcome.result.created
    assert count_events(runtime) == 1
