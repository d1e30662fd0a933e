"""The follower with a pipelined reader (the relay's way): the next page is
handed over while the one before awaits its acknowledgement, on a real PostgreSQL. What must
hold whatever the timing: the position moves past a page only once it was acknowledged, an
aggregate is never handed over while its events in the page before are unacknowledged, and a
page whose acknowledgement fails is applied one by one (parking what keeps failing) without
anything after it overtaking it."""

import asyncio
import uuid
from collections.abc import Callable, Sequence

import pytest

from services.followers.follower import (
    PAGE_SIZE,
    Connection,
    Follower,
    Pipelined,
    Positioned,
    read_position,
)
from services.followers.parked import list_parked
from services.kafka.relay import Relay
from services.processes.bootstrap import Runtime
from services.processes.published import PUBLICATIONS
from tests.integration.test_follower import Recorder, Tally, follow_until

Event = tuple[uuid.UUID, int]


class Pipe(Recorder):
    """A reader acknowledged a moment after a page is handed over; a page holding a broken
    event fails then (as a batch Kafka refuses would), and so does ``apply`` of it."""

    def __init__(self, name: str) -> None:
        super().__init__(name, transactional=False)
        self.refused: set[Event] = set()
        self.unacknowledged: list[set[uuid.UUID]] = []  # aggregates of each page on its way
        self.overlapped = 0  # hand-overs made while a page before was unacknowledged
        self.overtaken: list[uuid.UUID] = []  # aggregates handed over while on their way

    async def send(self, batch: Sequence[Positioned]) -> "asyncio.Future[None]":
        aggregates = {p.event.originator_id for p in batch}
        failed = bool(
            self.refused & {(p.event.originator_id, p.event.originator_version) for p in batch}
        )
        if self.unacknowledged:
            self.overlapped += 1
            self.overtaken += [a for page in self.unacknowledged for a in page & aggregates]
        self.unacknowledged.append(aggregates)
        acknowledged: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def acknowledge() -> None:
            self.unacknowledged.remove(aggregates)
            if failed:
                acknowledged.set_exception(ValueError("the broker refused the batch"))
            else:
                self.applied += [(p.event.originator_id, p.event.originator_version) for p in batch]
                acknowledged.set_result(None)

        asyncio.get_running_loop().call_later(0.02, acknowledge)
        return acknowledged

    async def apply(self, conn: Connection, batch: Sequence[Positioned]) -> None:
        for item in batch:
            if (item.event.originator_id, item.event.originator_version) in self.refused:
                raise ValueError(f"cannot apply {item.event.originator_id}")
        self.applied += [(i.event.originator_id, i.event.originator_version) for i in batch]


def interleaved(runtime: Runtime, n: int, ticks: int) -> list[Tally]:
    """``n`` aggregates whose events are spread over the log: each round saves one more
    event of every aggregate, so one aggregate's events fall in different pages."""
    made = [Tally(label=f"t{i}") for i in range(n)]
    runtime.store.save(*made)
    for k in range(ticks):
        for tally in made:
            tally.tick(k)
        runtime.store.save(*made)
    return made


def pipelined(runtime: Runtime, reader: Pipe) -> Follower:
    return Follower(runtime.store, runtime.pool, reader, batch_size=3, idle_poll=0.1, backoff=0.01)


def in_order(applied: list[Event]) -> Callable[[uuid.UUID], list[int]]:
    """An aggregate's versions in the order they were first applied (consumers de-duplicate
    on the event's identity, as they do on the CloudEvent id)."""

    def versions(aggregate: uuid.UUID) -> list[int]:
        seen: list[int] = []
        for a, version in applied:
            if a == aggregate and version not in seen:
                seen.append(version)
        return seen

    return versions


async def test_the_next_page_is_handed_over_while_the_one_before_is_unacknowledged(
    runtime: Runtime,
) -> None:
    reader = Pipe(f"test-{uuid.uuid4().hex[:6]}")
    assert isinstance(reader, Pipelined)
    made = interleaved(runtime, 7, ticks=3)
    f = pipelined(runtime, reader)
    await follow_until(f, lambda: len({*reader.applied}) == 28)
    assert reader.overlapped > 0  # the pipeline ran
    assert reader.overtaken == []  # never an aggregate on its way
    versions = in_order(reader.applied)
    assert all(versions(t.id) == [1, 2, 3, 4] for t in made)
    assert await read_position(runtime.pool, reader.name) == (
        runtime.store.recorder.max_notification_id()
    )


@pytest.mark.parametrize("aggregates", [3, 7])  # its next event in the next page, or later
async def test_a_page_that_fails_on_its_way_is_applied_one_by_one_and_never_overtaken(
    runtime: Runtime, aggregates: int
) -> None:
    """A failed acknowledgement with the next page already handed over: the failed page's
    good events are applied again one by one, the event that fails is parked with its
    aggregate's later events behind it (none of them applied), the rest flows; every
    aggregate's events in order, the position at the head."""
    reader = Pipe(f"test-{uuid.uuid4().hex[:6]}")
    bad, *good = interleaved(runtime, aggregates, ticks=3)
    reader.refused = {(bad.id, 1)}
    f = pipelined(runtime, reader)
    events = 4 * len(good)
    await follow_until(f, lambda: len({*reader.applied}) == events)  # stopping settles the rest
    assert reader.overtaken == []
    versions = in_order(reader.applied)
    assert all(versions(t.id) == [1, 2, 3, 4] for t in good)
    assert versions(bad.id) == []
    parked = await list_parked(runtime.pool, reader.name)
    assert [(p.originator_id, p.originator_version) for p in parked] == [
        (bad.id, v) for v in (1, 2, 3, 4)
    ]
    assert "ValueError" in parked[0].error
    assert await read_position(runtime.pool, reader.name) == (
        runtime.store.recorder.max_notification_id()
    )


async def test_a_reader_may_ask_for_its_page_size_and_the_caller_overrides_it(
    runtime: Runtime,
) -> None:
    """The relay reads pages of ``Relay.page_size``; a reader that asks nothing
    gets ``PAGE_SIZE``; a caller's ``batch_size`` wins over both."""
    relay = Relay("127.0.0.1:1", PUBLICATIONS, source="urn:test")
    assert Follower(runtime.store, runtime.pool, relay).batch_size == Relay.page_size != PAGE_SIZE
    assert Follower(runtime.store, runtime.pool, relay, batch_size=7).batch_size == 7
    plain = Recorder("plain", transactional=False)
    assert Follower(runtime.store, runtime.pool, plain).batch_size == PAGE_SIZE
