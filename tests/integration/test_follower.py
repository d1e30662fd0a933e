"""The one follower of the log: positions, leadership, and poison events
parked with per-aggregate order kept, on a real PostgreSQL."""

import asyncio
import uuid
from collections.abc import Callable, Sequence

import pytest
from eventsourcing.domain import Aggregate, event
from eventsourcing.utils import get_topic

from services.followers.follower import Follower
from services.followers.parked import list_parked, release, skip
from services.followers.reader import Connection, Positioned
from services.processes.bootstrap import Runtime
from services.store.event_store import EVENTS_TABLE


class Tally(Aggregate):
    """A test aggregate of our own: each tick is one event."""

    @event("Started")
    def __init__(self, label: str) -> None:
        self.label = label

    @event("Ticked")
    def tick(self, n: int) -> None:
        pass


class Recorder:
    """A reader that keeps what it applied, and refuses the aggregates in ``broken``."""

    topics = (get_topic(Tally.Started), get_topic(Tally.Ticked))

    def __init__(self, name: str, transactional: bool) -> None:
        self.name, self.transactional = name, transactional
        self.applied: list[tuple[uuid.UUID, int]] = []
        self.broken: set[uuid.UUID] = set()

    async def open(self, say: Callable[[str], None]) -> None:
        pass

    async def close(self) -> None:
        pass

    async def apply(self, conn: Connection, batch: Sequence[Positioned]) -> None:
        for item in batch:
            if item.event.originator_id in self.broken:
                raise ValueError(f"cannot apply {item.event.originator_id}")
        self.applied += [(i.event.originator_id, i.event.originator_version) for i in batch]


def tallies(runtime: Runtime, n: int, ticks: int) -> list[Tally]:
    made = []
    for i in range(n):
        tally = Tally(label=f"t{i}")
        for k in range(ticks):
            tally.tick(k)
        made.append(tally)
    runtime.store.save(*made)
    return made


def broken_reader(
    runtime: Runtime, n: int, ticks: int, transactional: bool = True
) -> tuple[Recorder, list[Tally]]:
    """A fresh reader that fails on every event of the first of ``n`` new tallies."""
    reader = Recorder(f"test-{uuid.uuid4().hex[:6]}", transactional)
    made = tallies(runtime, n, ticks=ticks)
    reader.broken = {made[0].id}
    return reader, made


async def follow_until(follower: Follower, done: Callable[[], bool], timeout: float = 30) -> None:
    stop = asyncio.Event()
    task = asyncio.create_task(follower.run(stop))
    try:
        async with asyncio.timeout(timeout):
            while not done():
                assert not task.done(), task
                await asyncio.sleep(0.05)
    finally:
        stop.set()
        await task


def follower(runtime: Runtime, reader: Recorder) -> Follower:
    return Follower(runtime.store, runtime.pool, reader, batch_size=50, idle_poll=0.1, backoff=0.01)


@pytest.mark.parametrize("transactional", [False, True])
async def test_a_poison_event_is_parked_and_the_reader_goes_on(
    runtime: Runtime, transactional: bool
) -> None:
    """Parked after a few attempts, others flow, the same aggregate waits."""
    reader, (bad, *good) = broken_reader(runtime, 4, ticks=2, transactional=transactional)
    f = follower(runtime, reader)
    await follow_until(f, lambda: len(reader.applied) == 9)  # 3 aggregates x 3 events
    assert {a for a, _ in reader.applied} == {g.id for g in good}
    parked = await list_parked(runtime.pool, reader.name)
    assert [(p.originator_id, p.originator_version) for p in parked] == [
        (bad.id, 1),
        (bad.id, 2),
        (bad.id, 3),
    ]
    first, *behind = parked
    assert "ValueError: cannot apply" in first.error
    assert first.attempts == 3
    assert all(p.behind == first.position for p in behind)
    assert all("waits behind" in p.error for p in behind)
    assert f.status.parked == 3

    # Fixed: a retry applies the parked events in order, and then they are gone.
    reader.broken.clear()
    assert await release(runtime.pool, reader.name) == 3
    await follow_until(f, lambda: len(reader.applied) == 12)
    assert reader.applied[-3:] == [(bad.id, 1), (bad.id, 2), (bad.id, 3)]
    assert await list_parked(runtime.pool, reader.name) == []


async def test_events_after_a_parked_one_of_the_same_aggregate_are_parked_behind_it(
    runtime: Runtime,
) -> None:
    reader, (bad,) = broken_reader(runtime, 1, ticks=0)
    f = follower(runtime, reader)
    await follow_until(f, lambda: f.status.parked == 1)
    bad.tick(1)
    runtime.store.save(bad)
    (other,) = tallies(runtime, 1, ticks=0)
    await follow_until(f, lambda: len(reader.applied) == 1)
    assert reader.applied == [(other.id, 1)]
    assert [p.originator_version for p in await list_parked(runtime.pool, reader.name)] == [1, 2]


async def test_a_retry_that_fails_again_parks_it_again_and_keeps_the_order(
    runtime: Runtime,
) -> None:
    reader, _ = broken_reader(runtime, 1, ticks=1, transactional=False)
    f = follower(runtime, reader)
    await follow_until(f, lambda: f.status.parked == 2)
    await release(runtime.pool, reader.name)
    retried = 0

    async def check() -> None:
        nonlocal retried
        retried = (await list_parked(runtime.pool, reader.name))[0].attempts

    stop = asyncio.Event()
    task = asyncio.create_task(f.run(stop))
    async with asyncio.timeout(30):
        while retried < 6:
            await check()
            await asyncio.sleep(0.05)
    stop.set()
    await task
    parked = await list_parked(runtime.pool, reader.name)
    assert [(p.originator_version, p.released) for p in parked] == [(1, False), (2, False)]
    assert parked[0].attempts == 6
    assert reader.applied == []


async def test_a_skipped_event_is_never_applied_and_the_ones_behind_it_are(
    runtime: Runtime,
) -> None:
    reader, (bad,) = broken_reader(runtime, 1, ticks=1)
    f = follower(runtime, reader)
    await follow_until(f, lambda: f.status.parked == 2)
    first = (await list_parked(runtime.pool, reader.name))[0]
    reader.broken.clear()
    assert await skip(runtime.pool, reader.name, first.position)
    await follow_until(f, lambda: len(reader.applied) == 1)
    assert reader.applied == [(bad.id, 2)]
    assert await list_parked(runtime.pool, reader.name) == []


async def test_only_one_follower_of_a_reader_leads_and_a_standby_takes_over(
    runtime: Runtime,
) -> None:
    reader_a = Recorder(f"test-{uuid.uuid4().hex[:6]}", transactional=True)
    reader_b = Recorder(reader_a.name, transactional=True)
    tallies(runtime, 2, ticks=0)
    first, second = follower(runtime, reader_a), follower(runtime, reader_b)
    stop_first, stop_second = asyncio.Event(), asyncio.Event()
    leader = asyncio.create_task(first.run(stop_first))
    standby = asyncio.create_task(second.run(stop_second))
    try:
        async with asyncio.timeout(30):
            while len(reader_a.applied) < 2:
                await asyncio.sleep(0.05)
        assert second.status.state == "standby"
        stop_first.set()
        await leader
        tallies(runtime, 3, ticks=0)
        async with asyncio.timeout(30):
            while len(reader_b.applied) < 3:
                await asyncio.sleep(0.05)
    finally:
        stop_first.set()
        stop_second.set()
        await asyncio.gather(leader, standby)
    assert len(reader_a.applied) == 2  # each event once
    assert len(reader_b.applied) == 3


async def test_a_reader_crash_is_restarted_by_the_supervisor(runtime: Runtime) -> None:
    """A crash is logged and the task restarts; nothing dies quietly."""
    runs = 0

    async def flaky() -> None:
        nonlocal runs
        runs += 1
        if runs < 3:
            raise RuntimeError("boom")
        await runtime.stop.wait()

    supervised = runtime.supervisor.start("flaky", flaky)
    async with asyncio.timeout(30):
        while runs < 3:
            await asyncio.sleep(0.05)
    assert supervised.alive
    assert supervised.restarts == 2
    assert supervised.last_error == "RuntimeError: boom"


async def test_status_reports_each_reader_and_shows_parked_events_as_incidents(
    runtime: Runtime,
) -> None:
    """A parked event degrades the reader (an operator's to-do) but does not make it
    unhealthy: the reader goes on with every other aggregate (services/processes/health.py)."""
    reader, _ = broken_reader(runtime, 1, ticks=0)
    runtime.follow(reader)
    async with asyncio.timeout(30):
        while True:
            (health,) = await runtime.health(only=[reader.name])
            if health.parked:
                break
            await asyncio.sleep(0.1)
    assert health.ok, health.problems
    assert health.degraded
    assert health.incidents == ["1 parked events (feedbackloop parked list)"]
    (never,) = await runtime.health(only=["not-a-reader"])
    assert never.problems == ["never started"]


async def test_pages_read_ahead_apply_every_event_once_and_park_one_that_cannot_be_decoded(
    runtime: Runtime,
) -> None:
    """A page behind is read and decoded while the one before it is applied:
    every event still arrives once and in order, and an event whose stored state cannot be
    decoded is parked (with its aggregate's later events behind it) when its turn comes."""
    reader = Recorder(f"test-{uuid.uuid4().hex[:6]}", transactional=True)
    made = tallies(runtime, 40, ticks=4)  # 200 events: four pages of 50
    bad = made[17]
    async with runtime.pool.acquire() as conn:
        await conn.execute(
            f"UPDATE {EVENTS_TABLE} SET state = 'not json'::bytea "
            "WHERE originator_id = $1 AND originator_version = 2",
            bad.id,
        )
    f = follower(runtime, reader)
    await follow_until(f, lambda: len(reader.applied) == 196 and f.status.parked == 4)
    stuck = {(bad.id, v) for v in (2, 3, 4, 5)}
    expected = {(t.id, v) for t in made for v in range(1, 6)} - stuck
    assert len(reader.applied) == len(set(reader.applied)) == 196  # once each
    assert set(reader.applied) == expected
    for tally in made:  # each aggregate's events in order
        versions = [v for a, v in reader.applied if a == tally.id]
        assert versions == sorted(versions)
    parked = await list_parked(runtime.pool, reader.name)
    assert [(p.originator_id, p.originator_version) for p in parked] == [
        (bad.id, v) for v in (2, 3, 4, 5)
    ]
