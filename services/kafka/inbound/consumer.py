"""The consumer behind every declared subscription: a plain aiokafka loop, not FastStream's.

Why not FastStream's batch subscriber (``batch=True``, 0.7): it flattens a poll of every
partition into one tuple, its ``ack`` commits every partition's position at once and its
``nack`` rewinds them all, so one partition's retry would hold back or replay the others.
Here each partition's slice of a poll is settled on its own (one transaction, then its own
offset commit), and partitions are settled concurrently. FastStream still declares the
subscribers for the AsyncAPI document (``services.kafka.inbound.asyncapi``).

Offsets are committed only after the messages are settled: applied (events, receipts and the
partition's tracking record in one transaction), dead-lettered, or parked. Never at-most-once.

Issue 12, overlap: two polls are in flight at most. While one poll's transaction waits in
PostgreSQL, the next is read, its receipts looked up and handed to the command bus, which
decides it meanwhile (``services.bus.command_bus``); it is appended only after the one before, and
not
at all if that one failed whole. A poll's retries and its offset commit wait for the poll
before to be settled, so offsets and positions never move past a poll that failed. Deciding
early sees the store as it was before the poll in flight, as a poll's own commands already
see it: repeats across the two are caught by their receipts (a conflict, then one by one).

Failures: a refusal (``DomainError``) is a dead letter at once; anything else is retried with
backoff. While PostgreSQL does not answer, the wait is unbounded (doubling, capped at
``max_backoff``) because no message could be settled anyway; while it answers, a message that
keeps failing is parked after ``max_attempts`` and the partition moves on.
"""

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import asyncpg
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from eventsourcing.persistence import Tracking

from contracts.errors import DomainError, Refused
from services.bus.command_bus import CommandBus
from services.bus.decisions import Outcome, Result
from services.bus.issued import Issued
from services.bus.receipts import receipt_id
from services.followers.heartbeats import Beat, beating, forget_silent, inbound_reader
from services.kafka.inbound.dead_letters import DeadLetters
from services.kafka.inbound.parking import park
from services.kafka.inbound.parsing import parse
from services.kafka.inbound.subscription import Subscription
from services.store.event_store import EventStore
from services.store.existing import EXISTING_ON_LOOP

log = logging.getLogger(__name__)

RECEIVED = EXISTING_ON_LOOP  # which receipts exist, by id
READ_STRIDE = 50  # records read between two turns of the event loop (``_read``)


@dataclass  # not frozen: one a message, and a frozen one costs four times as much to build
class Command:
    record: Any
    subscription: Subscription
    issued: Issued


class Poll:
    """One poll being settled, and the poll before it. Issue 12: a poll's commands go to the
    command bus while the poll before is still being appended (the bus decides them while
    PostgreSQL stores the other), but never ahead of it: its slices enter the bus's queue
    after every slice of the poll before did (the bus appends in that order, and does not
    try a batch after one that failed whole); a failed message is retried, and the poll's
    offsets committed, only once the poll before is settled."""

    def __init__(self, before: "Poll | None", slices: int) -> None:
        self.before = before
        self.task: asyncio.Task[None] | None = None
        self.queued = asyncio.Event()  # every slice's first attempt is in the bus's queue
        self._waiting = slices

    def slice(self) -> "Slice":
        return Slice(self)

    def _slice_queued(self) -> None:
        self._waiting -= 1
        if self._waiting <= 0:
            self.queued.set()

    async def turn(self) -> None:
        """Until the poll before is in the bus's queue (or gone)."""
        if self.before is not None:
            await self.before.queued.wait()

    async def before_settled(self) -> None:
        """Until the poll before is settled; its failure is its own (``raise_before``)."""
        if self.before is not None and self.before.task is not None:
            await asyncio.wait({self.before.task})

    async def raise_before(self) -> None:
        """The poll before settled and committed; raises what it raised."""
        if self.before is not None and self.before.task is not None:
            await self.before.task


class Slice:
    """One partition's slice of a poll, telling its poll once that it is in the queue."""

    def __init__(self, poll: Poll) -> None:
        self.poll, self._told = poll, False

    def queued(self) -> None:
        if not self._told:
            self._told = True
            self.poll._slice_queued()


class Failed(DomainError):
    """A message that kept failing for reasons of its own; parked with this reason."""

    code = "failed"


class Stopped(Exception):
    """Asked to stop while waiting to retry: leave without committing the offsets."""


class InboundConsumer:
    def __init__(
        self,
        bus: CommandBus,
        store: EventStore,
        pool: asyncpg.Pool,
        subscriptions: Sequence[Subscription],
        *,
        bootstrap: str,
        group_id: str,
        topic_prefix: str = "",
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        # Issue 12: 1,000 applied faster than 500 (fewer fixed costs a poll) and than 2,000
        # (a poll's three transactions then wait longer on one another) on 2 cores.
        max_records: int = 1000,
        max_attempts: int = 5,
        backoff: float = 0.2,
        max_backoff: float = 30.0,
        heartbeat: float = 5.0,
        prepare: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._bus, self._store, self._pool = bus, store, pool
        self._by_topic: dict[str, dict[str, Subscription]] = {}
        for subscription in subscriptions:
            if not bus.handles(subscription.model):
                raise TypeError(f"no handler for {subscription.model.__name__}")
            by_type = self._by_topic.setdefault(topic_prefix + subscription.topic, {})
            by_type[subscription.cloudevent_type] = subscription
        self._bootstrap, self._group_id, self._clock = bootstrap, group_id, clock
        self._max_records, self._max_attempts = max_records, max_attempts
        self._backoff, self._max_backoff = backoff, max_backoff
        self._heartbeat, self._member = heartbeat, f"{socket.gethostname()}:{os.getpid()}"
        self._prepare = prepare  # e.g. create the topics, once Kafka answers
        self._state, self._changed = "starting", asyncio.Event()
        self.lag = 0  # messages its partitions hold beyond what it has read
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        # What became of the messages this consumer settled (for status, tests and the bench).
        self.applied = 0  # commands whose events it committed
        self.repeated = 0  # commands recognised by identity as applied before
        self.dead_lettered = 0
        self.parked = 0
        self.failed_attempts = 0  # attempts that failed for other reasons than a refusal
        self._dead_letters: DeadLetters | None = None

    @property
    def state(self) -> str:
        """What it does now, for status and /readyz: its heartbeat tells a change at once."""
        return self._state

    @state.setter
    def state(self, state: str) -> None:
        if state != self._state:
            self._state = state
            self._changed.set()

    @property
    def settled(self) -> int:
        return self.applied + self.repeated + self.dead_lettered + self.parked

    @property
    def topics(self) -> list[str]:
        return sorted(self._by_topic)

    async def start(self) -> None:
        """Run in the background until ``stop()``."""
        self._task = asyncio.create_task(self.run(asyncio.Event()), name="inbound")

    async def stop(self, grace: float = 10.0) -> None:
        """Stop after the poll in hand is settled (or cancel it after ``grace`` seconds: its
        offsets are then not committed, and the next consumer redoes it by identity)."""
        self._stop.set()
        if self._task is not None:
            done, _ = await asyncio.wait({self._task}, timeout=grace)
            if not done:
                self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def run(self, stop: asyncio.Event) -> None:
        """Consume until ``stop`` is set (or ``stop()`` is called); a broken connection or a
        failed commit restarts the consumer (after a pause), which resumes from the committed
        offsets."""
        self._task = self._task or asyncio.current_task()
        helpers = [asyncio.create_task(self._forward(stop)), asyncio.create_task(self._beat())]
        pause = self._backoff
        try:
            while not self._stop.is_set():
                try:
                    await self._consume()
                    pause = self._backoff
                except Stopped:
                    return
                except Exception as error:
                    self.state = f"retrying: {type(error).__name__}: {error}"[:500]
                    log.exception("inbound: consumer stopped; restarting in %.1fs", pause)
                    with contextlib.suppress(Stopped):
                        await self._pause(pause)
                    pause = min(self._max_backoff, pause * 2)
        finally:
            for helper in helpers:
                helper.cancel()
            await asyncio.gather(*helpers, return_exceptions=True)

    async def _forward(self, stop: asyncio.Event) -> None:
        await stop.wait()
        self._stop.set()

    async def _beat(self) -> None:
        """Tells ``feedbackloop status`` (any process) that this consumer lives, and how;
        members gone for an hour are forgotten."""
        reader = inbound_reader(self._group_id)
        await forget_silent(self._pool, reader, seconds=3600)
        await beating(
            self._pool,
            reader,
            lambda: Beat(self.state, self.lag, self.settled),
            self._changed,
            every=self._heartbeat,
            member=self._member,
        )

    async def _consume(self) -> None:
        consumer = AIOKafkaConsumer(
            *self.topics,
            bootstrap_servers=self._bootstrap,
            group_id=self._group_id,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            # Memory stays bounded: at most this much fetched per partition and per request.
            max_partition_fetch_bytes=1024 * 1024,
            fetch_max_bytes=8 * 1024 * 1024,
        )
        producer = AIOKafkaProducer(bootstrap_servers=self._bootstrap, acks="all")
        # Issue 12: the next poll is fetched and read while this one is applied (its time in
        # PostgreSQL and Kafka is then not time lost), and handed to the bus while this one
        # is appended (``Poll``): at most two polls in flight, settled and committed in order.
        inflight: list[Poll] = []
        try:
            self.state = f"waiting for Kafka at {self._bootstrap}"
            if self._prepare is not None:
                await self._prepare()
            await consumer.start()
            await producer.start()
            self._dead_letters = DeadLetters(producer, self._pool)
            self.state = "consuming"
            log.info("inbound: consuming %s", ", ".join(self.topics))
            while not self._stop.is_set():
                polled = await consumer.getmany(timeout_ms=500, max_records=self._max_records)
                read = {tp: await self._read(records) for tp, records in polled.items()}
                while inflight and (len(inflight) >= 2 or self._done(inflight[0])):
                    await self._settled(inflight.pop(0))
                if polled:
                    poll = Poll(inflight[-1] if inflight else None, len(polled))
                    poll.task = asyncio.create_task(self._settle_poll(consumer, polled, read, poll))
                    inflight.append(poll)
                else:
                    while inflight:
                        await self._settled(inflight.pop(0))
                    self.lag = await self._lag(consumer)
            while inflight:
                await self._settled(inflight.pop(0))
        finally:
            for poll in inflight:  # its offsets stay uncommitted: redone by identity
                if poll.task is not None and not poll.task.done():
                    poll.task.cancel()
            await asyncio.gather(*(p.task for p in inflight if p.task), return_exceptions=True)
            await consumer.stop()
            await producer.stop()

    @staticmethod
    def _done(poll: Poll) -> bool:
        return poll.task is not None and poll.task.done()

    @staticmethod
    async def _settled(poll: Poll) -> None:
        assert poll.task is not None
        await poll.task

    async def _settle_poll(
        self,
        consumer: AIOKafkaConsumer,
        polled: dict[Any, list[Any]],
        read: dict[Any, tuple[list["Command"], list[tuple[Any, DomainError]]]],
        poll: Poll,
    ) -> None:
        """Each partition's slice settled (concurrently), then the poll's offsets committed,
        after the poll before's."""
        try:
            settled = await asyncio.gather(
                *(self._settle(records, *read[tp], poll) for tp, records in polled.items()),
                return_exceptions=True,
            )
        finally:
            poll.queued.set()  # whatever became of it, the poll after need not wait
        for outcome in settled:
            if isinstance(outcome, BaseException):
                raise outcome
        await poll.raise_before()
        await consumer.commit({tp: records[-1].offset + 1 for tp, records in polled.items()})
        self.lag = await self._lag(consumer)

    @staticmethod
    async def _lag(consumer: AIOKafkaConsumer) -> int:
        """Messages beyond this consumer's position, over the partitions it holds (a
        partition not yet fetched from counts nothing)."""
        behind = 0
        for partition in consumer.assignment():
            end = consumer.highwater(partition)
            if end is not None:
                behind += max(0, end - await consumer.position(partition))
        return behind

    async def _read(
        self, records: list[Any]
    ) -> tuple[list[Command], list[tuple[Any, DomainError]]]:
        """One partition's slice of a poll read: the commands, and the refused messages.

        It lets the poll being applied go on every ``READ_STRIDE`` records: reading a poll
        takes tens of milliseconds, in which that poll's queries would otherwise wait for
        their answers to be read, and the command bus for its next batch."""
        refused: list[tuple[Any, DomainError]] = []
        commands: list[Command] = []
        for count, record in enumerate(records, 1):
            if count % READ_STRIDE == 0:
                await asyncio.sleep(0)
            try:
                subscription, issued = parse(record, self._by_topic[record.topic], self._clock)
                commands.append(Command(record, subscription, issued))
            except DomainError as error:
                refused.append((record, error))
            except Exception as error:  # reading is pure: this message's failure alone
                log.exception(
                    "inbound: %s:%s@%s could not be read",
                    record.topic,
                    record.partition,
                    record.offset,
                )
                reason = f"the message could not be read ({type(error).__name__})"
                refused.append((record, Refused(reason, field="value")))
        return commands, refused

    async def _settle(
        self,
        records: list[Any],
        commands: list[Command],
        refused: list[tuple[Any, DomainError]],
        poll: Poll,
    ) -> None:
        """One partition's slice of a poll: decide, apply, dead-letter or park every message."""
        first = records[0]
        name = f"{first.topic}:{first.partition}"
        refused = refused + await self._apply(commands, name, records[-1].offset, poll)
        assert self._dead_letters is not None
        written, parked = await self._dead_letters.send(refused)
        self.dead_lettered += written
        self.parked += parked

    async def _apply(
        self, commands: list[Command], name: str, last: int, poll: Poll
    ) -> list[tuple[Any, DomainError]]:
        """Apply the commands and record the position; answers the refused ones."""
        refused: list[tuple[Any, DomainError]] = []
        pending, attempts, pause = commands, 0, self._backoff
        first: Slice | None = poll.slice()  # the first attempt takes its turn in the queue
        while True:
            try:
                results = await self._attempt(pending, name, last, first, alone=attempts >= 2)
            except Exception as error:  # the store away, most likely
                results = [error] * len(pending)
            finally:
                if first is not None:
                    first.queued()
                    first = None
            retry = []
            for command, result in zip(pending, results, strict=True):
                if isinstance(result, Outcome):
                    if result.already_applied:
                        self.repeated += 1
                    else:
                        self.applied += 1
                elif isinstance(result, DomainError):
                    refused.append((command.record, result))
                else:
                    retry.append((command, result))
            if not retry:
                return refused
            self.failed_attempts += 1
            await poll.before_settled()  # a retry never overtakes the poll before
            if await self._store_answers():
                attempts += 1
            if attempts >= self._max_attempts:
                for command, result in retry:
                    reason = f"failed {attempts} times: {type(result).__name__}: {result}"
                    log.error("inbound: parking %s@%s: %s", name, command.record.offset, reason)
                    await park(self._pool, command.record, Failed(reason), "parked")
                    self.parked += 1
                return refused
            log.warning(
                "inbound: %d message(s) of %s failed (%s); retrying in %.1fs",
                len(retry),
                name,
                retry[0][1],
                pause,
            )
            await self._pause(pause)
            pause = min(self._max_backoff, pause * 2)
            pending = [command for command, _ in retry]

    async def _attempt(
        self, commands: list[Command], name: str, last: int, turn: Slice | None, *, alone: bool
    ) -> list[Result]:
        """One try at the commands. On a poll's first try (``turn``), the bus gets them in
        the poll's turn, and the poll after may take its own once they are queued."""
        results: dict[int, Result] = {}
        admitted: list[tuple[int, Command]] = []
        for index, command in enumerate(commands):
            try:
                if command.subscription.admit is not None:
                    await command.subscription.admit(self._pool, command.issued)
                admitted.append((index, command))
            except Exception as error:  # a refusal, or this message's failure alone
                results[index] = error
        received = await self._received([c.issued for _, c in admitted])
        fresh = []
        for index, command in admitted:
            if command.issued.identity in received:
                results[index] = Outcome(None, 0, already_applied=True)
            else:
                fresh.append((index, command))
        tracking = await self._position(name, last)
        if not fresh and tracking is None:
            pass
        elif alone:  # a message that failed its neighbours' transaction is tried on its own
            for index, command in fresh:
                [results[index]] = await self._bus.execute_batch([command.issued], None)
            if tracking is not None:
                await self._bus.execute_batch([], tracking)
        else:
            if turn is not None:
                await turn.poll.turn()
            answer = self._bus.submit_batch([c.issued for _, c in fresh], tracking)
            if turn is not None:
                turn.queued()
            applied = await answer
            results.update(zip((i for i, _ in fresh), applied, strict=True))
        return [results[i] for i in range(len(commands))]

    async def _received(self, issued: list[Issued]) -> set[str | None]:
        """Identities applied before, in one query (a redelivered batch costs no conflicts)."""
        by_id = {receipt_id(i.identity): i.identity for i in issued if i.identity is not None}
        if not by_id:
            return set()
        rows = await self._pool.fetch(RECEIVED, list(by_id))
        return {by_id[UUID(str(row["id"]))] for row in rows}

    async def _position(self, name: str, last: int) -> Tracking | None:
        """The tracking record to write, if it moves the position forward. After a topic is
        recreated its offsets restart below the recorded position: the position then stays
        until they pass it (it only says how far a consumer got; identities decide)."""
        recorder = self._store.process_recorder
        position = await asyncio.to_thread(recorder.max_tracking_id, name)
        return Tracking(name, last) if position is None or last > position else None

    async def _pause(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), timeout=seconds)
        if self._stop.is_set():
            raise Stopped

    async def _store_answers(self) -> bool:
        try:
            async with asyncio.timeout(5):
                await self._pool.fetchval("SELECT 1")
        except Exception:
            return False
        return True
