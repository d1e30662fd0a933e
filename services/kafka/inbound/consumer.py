"""The consumer behind every declared subscription: a plain aiokafka loop, not FastStream's.

Why not FastStream's batch subscriber (``batch=True``, 0.7): it flattens a poll of every
partition into one tuple, its ``ack`` commits every partition's position at once and its
``nack`` rewinds them all, so one partition's retry would hold back or replay the others.
Here each partition's slice of a poll is settled on its own (one transaction, then its own
offset commit), and partitions are settled concurrently. FastStream still declares the
subscribers for the AsyncAPI document (``services.kafka.inbound.asyncapi``).

Offsets are committed only after the messages are settled (``services.kafka.inbound.settling``):
applied (events, receipts and the partition's tracking record in one transaction),
dead-lettered, or parked. Never at-most-once. Two polls are in flight at most
(``services.kafka.inbound.polls``): the next is fetched, read and handed to the bus while this
one is applied (its time in PostgreSQL and Kafka is then not time lost), and they are settled
and committed in order. A broken connection or a failed commit restarts the consumer after a
pause that doubles up to ``max_backoff`` (tenacity), for as long as it takes; it resumes from
the committed offsets.
"""

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import asyncpg
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, wait_exponential

from services.bus.asking import asking
from services.bus.command_bus import CommandBus
from services.followers.heartbeats import Beat, beating, forget_silent, inbound_reader
from services.kafka.inbound.dead_letters import DeadLetters
from services.kafka.inbound.polls import Poll
from services.kafka.inbound.reading import Command, Refusal, read_slice
from services.kafka.inbound.refusals import DOOR, audit_refused
from services.kafka.inbound.settling import Settler, Tally
from services.kafka.inbound.subscription import Subscription
from services.permissions.sources import EVERY_ROLE_SOURCES, SourceRoles
from services.store.event_store import EventStore

log = logging.getLogger(__name__)


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
        # Fewer fixed costs a poll than 500; not so many that two polls' transactions wait
        # long on one another.
        max_records: int = 1000,
        max_attempts: int = 5,
        backoff: float = 0.2,
        max_backoff: float = 30.0,
        heartbeat: float = 5.0,
        prepare: Callable[[], Awaitable[None]] | None = None,
        sources: SourceRoles = EVERY_ROLE_SOURCES,  # the roles of each source (decisions D27)
    ) -> None:
        self._bus, self._store, self._pool = bus, store, pool
        self._sources = sources
        self._by_topic: dict[str, dict[str, Subscription]] = {}
        for subscription in subscriptions:
            if not bus.handles(subscription.model):
                raise TypeError(f"no handler for {subscription.model.__name__}")
            by_type = self._by_topic.setdefault(topic_prefix + subscription.topic, {})
            by_type[subscription.cloudevent_type] = subscription
        self._bootstrap, self._group_id, self._clock = bootstrap, group_id, clock
        self._max_records = max_records
        self._backoff, self._max_backoff = backoff, max_backoff
        self._heartbeat, self._member = heartbeat, f"{socket.gethostname()}:{os.getpid()}"
        self._prepare = prepare  # e.g. create the topics, once Kafka answers
        self._state, self._changed = "starting", asyncio.Event()
        self.lag = 0  # messages its partitions hold beyond what it has read
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.tally = Tally()  # what became of the messages it settled
        self._settler = Settler(
            bus, store, pool, self.tally, self._pause, max_attempts, backoff, max_backoff
        )

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
        return self.tally.settled

    @property
    def applied(self) -> int:
        return self.tally.applied

    @property
    def repeated(self) -> int:
        return self.tally.repeated

    @property
    def dead_lettered(self) -> int:
        return self.tally.dead_lettered

    @property
    def parked(self) -> int:
        return self.tally.parked

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

        def restarting(state: RetryCallState) -> None:
            error = state.outcome.exception() if state.outcome else None
            self.state = f"retrying: {type(error).__name__}: {error}"[:500]
            log.error(
                "inbound: consumer stopped; restarting in %.1fs",
                state.upcoming_sleep,
                exc_info=error,
            )

        restarts = AsyncRetrying(
            # Never a stop, nor a cancellation (no Exception).
            retry=retry_if_exception(
                lambda e: isinstance(e, Exception) and not isinstance(e, Stopped)
            ),
            wait=wait_exponential(multiplier=self._backoff, max=self._max_backoff),
            before_sleep=restarting,
            sleep=self._rest,
        )
        try:
            async for attempt in restarts:
                with attempt:
                    if not self._stop.is_set():
                        await self._consume()
        except Stopped:
            return
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
        # The commands it issues name the door they came in by (decisions D110).
        with asking(DOOR):
            await self._consume_at_door()

    async def _consume_at_door(self) -> None:
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
        inflight: list[Poll] = []  # at most two, settled and committed in order
        try:
            self.state = f"waiting for Kafka at {self._bootstrap}"
            if self._prepare is not None:
                await self._prepare()
            await consumer.start()
            await producer.start()
            dead_letters = DeadLetters(producer, self._pool)
            self.state = "consuming"
            log.info("inbound: consuming %s", ", ".join(self.topics))
            while not self._stop.is_set():
                polled = await consumer.getmany(timeout_ms=500, max_records=self._max_records)
                read = {
                    tp: await read_slice(records, self._by_topic, self._clock, self._sources)
                    for tp, records in polled.items()
                }
                for _, refused in read.values():
                    audit_refused(self._settler.bus.audit, refused, self._sources, self._clock())
                while inflight and (len(inflight) >= 2 or inflight[0].done):
                    await inflight.pop(0).settled()
                if polled:
                    poll = Poll(inflight[-1] if inflight else None, len(polled))
                    settling = self._settle_poll(consumer, dead_letters, polled, read, poll)
                    poll.task = asyncio.create_task(settling)
                    inflight.append(poll)
                else:
                    while inflight:
                        await inflight.pop(0).settled()
                    self.lag = await self._lag(consumer)
            while inflight:
                await inflight.pop(0).settled()
        finally:
            for poll in inflight:  # its offsets stay uncommitted: redone by identity
                if poll.task is not None and not poll.task.done():
                    poll.task.cancel()
            await asyncio.gather(*(p.task for p in inflight if p.task), return_exceptions=True)
            await consumer.stop()
            await producer.stop()

    async def _settle_poll(
        self,
        consumer: AIOKafkaConsumer,
        dead_letters: DeadLetters,
        polled: dict[Any, list[Any]],
        read: dict[Any, tuple[list[Command], list[Refusal]]],
        poll: Poll,
    ) -> None:
        """Each partition's slice settled (concurrently), then the poll's offsets committed,
        after the poll before's."""
        try:
            settled = await asyncio.gather(
                *(
                    self._settler.settle(records, *read[tp], poll, dead_letters)
                    for tp, records in polled.items()
                ),
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

    async def _pause(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), timeout=seconds)
        if self._stop.is_set():
            raise Stopped

    async def _rest(self, seconds: float) -> None:
        """A pause between two runs, cut short by a stop."""
        with contextlib.suppress(Stopped):
            await self._pause(seconds)
