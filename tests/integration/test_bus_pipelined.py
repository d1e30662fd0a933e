"""The command bus decides a batch while the one before it is appended: appends
stay in the order the batches were taken, and a batch after one that failed whole is not
tried, so an inbound partition's later poll never commits past a failed one."""

import asyncio
from datetime import UTC, datetime
from itertools import pairwise

from eventsourcing.persistence import Tracking

from contracts.feedback import RecordFeedback
from services.bus.decisions import Outcome
from services.bus.issued import Issued
from services.bus.units import NotTried
from services.processes.bootstrap import Runtime


def issued(command_id: str, identity: str | None = None) -> Issued:
    command = RecordFeedback.model_validate(
        {"projectId": "p", "subjectKind": "run", "subjectRef": "r", "kind": "rating", "rating": 2}
    )
    return Issued(command, "t", "alice", command_id, datetime.now(UTC), identity=identity)


def count_events(runtime: Runtime) -> int:
    return len(runtime.store.recorder.select_notifications(start=1, limit=100_000))


async def test_batches_taken_together_are_appended_in_the_order_they_were_submitted(
    runtime: Runtime,
) -> None:
    bus = runtime.bus
    # Each carries a tracking record: one tracked unit a batch, so these are four batches.
    answers = [
        bus.submit_batch([issued(f"b{n}-{i}") for i in range(5)], Tracking(f"part{n}", 1))
        for n in range(4)
    ]
    results = await asyncio.gather(*answers)
    positions = [[r.position for r in batch if isinstance(r, Outcome)] for batch in results]
    assert all(len(batch) == 5 for batch in positions)
    for before, after in pairwise(positions):
        assert max(before) < min(after)
    assert count_events(runtime) == 20


async def test_a_batch_after_one_that_failed_whole_is_not_tried(runtime: Runtime) -> None:
    bus = runtime.bus
    # A position beyond PostgreSQL's bigint: the first batch's transaction fails whole.
    failing = bus.submit_batch([issued("f-1")], Tracking("partition-a", 2**70))
    after = bus.submit_batch([issued("f-2")], Tracking("partition-b", 1))
    [failed], [not_tried] = await failing, await after
    assert isinstance(failed, Exception)
    assert not isinstance(failed, NotTried)
    assert isinstance(not_tried, NotTried)
    assert count_events(runtime) == 0
    # The bus goes on: the command not tried is applied when submitted again.
    [outcome] = await bus.execute_batch([issued("f-2")], Tracking("partition-b", 1))
    assert isinstance(outcome, Outcome)
    assert count_events(runtime) == 1


async def test_a_batch_decided_before_the_one_in_flight_committed_still_applies_once(
    runtime: Runtime,
) -> None:
    """The second batch repeats the first's identities and keys; it was decided before the
    first was stored, so its receipts conflict, and it is redone command by command: each
    command answered as applied before, nothing appended twice."""
    bus = runtime.bus
    first = bus.submit_batch(
        [issued(f"k{i}", identity=f"id-{i}") for i in range(10)], Tracking("p", 1)
    )
    second = bus.submit_batch(
        [issued(f"k{i}", identity=f"id-{i}") for i in range(10)], Tracking("p", 2)
    )
    applied, repeated = await first, await second
    assert all(isinstance(r, Outcome) and not r.already_applied for r in applied)
    assert all(isinstance(r, Outcome) and r.already_applied for r in repeated)
    assert count_events(runtime) == 20  # ten feedback events and their ten receipts
