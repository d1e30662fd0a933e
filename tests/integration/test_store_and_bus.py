"""The event store and the one command path, on a real PostgreSQL."""

import asyncio
import os
import uuid
from datetime import UTC, datetime

import pytest
from prometheus_client import REGISTRY

from contracts.feedback import RecordFeedback
from services.bootstrap import Runtime
from services.bus import Issued
from services.errors import Conflict
from services.store import StoreMisconfigured, open_store


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
    """Issue 12: an operator reads where a command's time goes (waiting to be taken,
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
        from services.bus import CommandBus
        from services.feedback.handlers import CREATES, HANDLERS

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

    from services.bus import CommandBus, Decision
    from services.feedback.handlers import HANDLERS

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
