"""The one follower of the notification log: every reader of the store runs on it.

A *reader* (the relay, each read model, the hand-over webhook, every process manager) says
which event topics it reads and how to apply a batch; the follower owns the rest:

- **position**: one row per reader in ``reader_positions``, moved forward only, in the same
  transaction as the reader's own writes (for transactional readers) or right after them;
- **leadership**: one active follower per reader (a PostgreSQL advisory lock held by its
  connection); others stand by and take over when that session ends;
- **wake**: LISTEN on the store's NOTIFY channel, polling as a fallback;
- **batching**: a page of the log at a time;
- **parking**: an event the reader keeps failing on (after ``attempts`` tries with backoff)
  is parked with its reason in ``parked_events`` and the reader goes on. Later events of the
  same aggregate are parked behind it, so one aggregate's order is never broken; other
  aggregates flow on. ``feedbackloop parked retry|skip`` releases them (see
  ``services/followers/parked.py``), and the live follower applies released events in order.

Failures are of two kinds. A *transient* one (PostgreSQL or Kafka away, the session lost)
sends the follower back to standby to try again with backoff: it says nothing about the
event. Anything else is the event's own problem and leads to parking.
"""

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable
from uuid import UUID

import asyncpg
import psycopg
from aiokafka.errors import KafkaError, KafkaTimeoutError
from asyncpg.pool import PoolConnectionProxy
from eventsourcing.persistence import Notification
from eventsourcing.persistence import PersistenceError as StoreUnavailable

from services.observing import metrics
from services.store.event_store import EVENTS_TABLE, EventStore
from services.store.log_reading import read_log

log = logging.getLogger(__name__)

Connection = asyncpg.Connection | PoolConnectionProxy

DDL = """
CREATE TABLE IF NOT EXISTS reader_positions (
    reader text PRIMARY KEY,
    position bigint NOT NULL DEFAULT 0,
    state text NOT NULL DEFAULT 'new',
    heartbeat_at timestamptz
);
CREATE TABLE IF NOT EXISTS parked_events (
    reader text NOT NULL,
    position bigint NOT NULL,
    originator_id uuid NOT NULL,
    originator_version bigint NOT NULL,
    topic text NOT NULL,
    error text NOT NULL,
    attempts int NOT NULL,
    behind bigint,
    released boolean NOT NULL DEFAULT false,
    parked_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (reader, position)
);
CREATE INDEX IF NOT EXISTS parked_events_aggregate ON parked_events (reader, originator_id);
"""


PAGE_SIZE = 500  # events a page, unless the reader or the caller says otherwise

# A non-transactional reader's position moved forward (never back), and the move told, in one
# statement: its transaction is the statement's own. Gives the position it moved from, or
# nothing if it was already there (a swap, a former leader's last write).
MOVE = """
WITH moved AS (
    UPDATE reader_positions AS r SET position = $2::bigint
    FROM (SELECT position FROM reader_positions WHERE reader = $1 FOR UPDATE) AS stored
    WHERE r.reader = $1 AND stored.position < $2::bigint
    RETURNING stored.position AS stored
)
SELECT stored, pg_notify($1, ($2::bigint)::text) FROM moved
"""


# Not frozen: a frozen dataclass sets each field through ``object.__setattr__``, and these
# are made once or twice for every event a reader reads (issue 12). Slots: smaller and
# quicker to read; nothing ever assigns to them after they are made.
@dataclass(slots=True)
class Positioned:
    """A domain event and its place in the notification log."""

    position: int
    event: Any


@dataclass(slots=True)
class Decoded:
    """An event decoded ahead of its turn, or why it could not be: a failure is the event's
    own, raised when its turn comes (and then parked like any other)."""

    positioned: Positioned | None
    error: Exception | None = None

    @classmethod
    def of(cls, store: EventStore, notification: Notification) -> "Decoded":
        try:
            return cls(decode(store, notification))
        except Exception as error:
            return cls(None, error)

    def event(self) -> Positioned:
        if self.error is not None:
            raise self.error
        assert self.positioned is not None
        return self.positioned


@dataclass(frozen=True)
class Page:
    """A page of the log: what it brings a reader to, its notifications and their events."""

    upto: int
    notifications: list[Notification]
    decoded: list[Decoded]


@dataclass(frozen=True)
class Sent:
    """A page handed over to a pipelined reader, its acknowledgement still to come."""

    after: int  # the position it was read after
    upto: int
    notifications: list[Notification]
    ready: list[Positioned]
    behind: list[Notification]
    acknowledged: "asyncio.Future[None]"
    aggregates: set[UUID | str]  # those of ``ready``: the ones on their way


def decode(store: EventStore, notification: Notification) -> Positioned:
    return Positioned(notification.id, store.mapper.to_domain_event(notification))


def read_page(store: EventStore, after: int, limit: int, topics: list[str]) -> Page:
    """The page of these topics after ``after``, every event decoded (or why it could not be).
    Blocking: callers run it in a thread, reading the next page while they apply this one."""
    upto, notifications = read_log(store, after, limit, topics)
    return Page(upto, notifications, [Decoded.of(store, n) for n in notifications])


class Reader(Protocol):
    """What a reader of the log tells the follower."""

    @property
    def name(self) -> str: ...

    @property
    def topics(self) -> Sequence[str]:
        """The event topics it reads; nothing else is fetched."""

    @property
    def transactional(self) -> bool:
        """Whether apply() runs in the position's transaction (read models do)."""

    # Optional: ``page_size``, the events a page it would rather have than ``PAGE_SIZE``.

    async def open(self, say: Callable[[str], None]) -> None:
        """Acquire what apply() needs (a Kafka producer …); may wait, saying why."""

    async def close(self) -> None: ...

    async def apply(self, conn: Connection, batch: Sequence[Positioned]) -> None:
        """Apply the batch; raise to refuse it (the follower then tries event by event)."""


@runtime_checkable
class Pipelined(Protocol):
    """A non-transactional reader whose apply is a hand-over and then a wait (the relay: its
    messages handed to the producer, then Kafka's acknowledgements). The follower hands over
    the next page while the one before is unacknowledged, and moves the position past a page
    only once it and every page before it were acknowledged. It never hands over an aggregate
    whose events in the page before are still unacknowledged: should that page fail, what
    follows it never overtakes it, and each aggregate's events keep their order."""

    async def send(self, batch: Sequence[Positioned]) -> "asyncio.Future[None]":
        """Hand the batch over; the future is done when it was applied (or raises why not)."""


def postgresql_away(error: BaseException) -> bool:
    """PostgreSQL is away, starting, shutting down or full ("too many clients") — a condition
    that passes, not a misconfiguration: a wrong password or database name is not one
    (asyncpg, which connects first, names those apart). The one list for the wait at start
    (services/processes/waiting.py), the readers' retries and the scheduled units
    (``is_transient``)."""
    return isinstance(
        error,
        OSError
        | TimeoutError
        | asyncpg.PostgresConnectionError
        | asyncpg.InterfaceError
        | asyncpg.CannotConnectNowError
        | asyncpg.AdminShutdownError
        | asyncpg.TooManyConnectionsError
        | psycopg.OperationalError
        # the library's own names for its driver's failures
        | StoreUnavailable,
    )


def is_transient(error: BaseException) -> bool:
    """A failure of the surroundings, not of the event: try again, never park."""
    if isinstance(error, KafkaError):
        return bool(getattr(error, "retriable", False)) or isinstance(error, KafkaTimeoutError)
    return postgresql_away(error)


async def first_of(*events: asyncio.Event, timeout: float) -> None:
    """Wait until one of the events is set, or the timeout passes."""
    waiters = [asyncio.create_task(event.wait()) for event in events]
    await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    for waiter in waiters:
        waiter.cancel()


def connected(conn: Connection) -> bool:
    """Whether the session still stands. Once it is lost, the pool detaches its proxy and
    every method of it raises, which must not hide the failure that cut the session."""
    try:
        return not conn.is_closed()
    except asyncpg.InterfaceError:
        return False


@dataclass
class ReaderStatus:
    """What this process knows of one of its readers, for /readyz and metrics."""

    name: str
    state: str = "starting"
    position: int = 0
    head: int = 0
    parked: int = 0
    applied: int = 0  # events applied since this process started
    said_at: float = field(default_factory=time.monotonic)
    changed: asyncio.Event = field(default_factory=asyncio.Event)  # the heartbeat tells at once

    def say(self, state: str) -> None:
        if state != self.state:
            log.info("%s: %s", self.name, state)
            self.changed.set()
        self.state = state
        self.said_at = time.monotonic()

    @property
    def lag(self) -> int:
        return max(self.head - self.position, 0)


async def ensure_tables(conn: Connection) -> None:
    await conn.execute(DDL)


async def read_position(pool: asyncpg.Pool | Connection, reader: str) -> int:
    value = await pool.fetchval("SELECT position FROM reader_positions WHERE reader = $1", reader)
    return int(value or 0)


class Follower:
    """Runs one reader over the log; see the module docstring."""

    def __init__(
        self,
        store: EventStore,
        pool: asyncpg.Pool,
        reader: Reader,
        *,
        batch_size: int | None = None,
        idle_poll: float = 1.0,
        attempts: int = 3,
        backoff: float = 0.2,
        heartbeat: float = 5.0,
    ) -> None:
        self.store, self.pool, self.reader = store, pool, reader
        # The page: as the caller says, else as the reader asks (``page_size``), else 500.
        self.batch_size: int = batch_size or int(getattr(reader, "page_size", PAGE_SIZE))
        self.idle_poll = idle_poll
        self.attempts, self.backoff, self.heartbeat = attempts, backoff, heartbeat
        self.status = ReaderStatus(reader.name)
        self._topics = list(reader.topics)
        # The next page, read while the current one is applied: (where it starts, the read).
        self._ahead: tuple[int, asyncio.Future[Page]] | None = None
        # A page handed over to a pipelined reader, not yet acknowledged (the relay's).
        self._sent: Sent | None = None
        self._pipelined = isinstance(reader, Pipelined) and not reader.transactional

    # -- running ---------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event) -> None:
        """Stand by until leader, then follow until stopped; a transient failure sends it back
        to standby after a pause that grows up to 30 s."""
        pause = self.backoff
        while not stop.is_set():
            try:
                await self._lead(stop)
                pause = self.backoff
            except Exception as error:
                if not is_transient(error):
                    raise  # a bug of ours: the supervisor logs it and restarts this task
                self.status.say(f"retrying: {type(error).__name__}: {error}")
                log.warning("%s: %s; standing by for %.1f s", self.reader.name, error, pause)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), timeout=pause)
                pause = min(pause * 2, 30.0)

    async def _lead(self, stop: asyncio.Event) -> None:
        async with self.pool.acquire() as conn:
            await self._register(conn)
            self.status.say("standby")
            lock = f"feedbackloop-reader:{self.reader.name}"
            while not await conn.fetchval("SELECT pg_try_advisory_lock(hashtext($1))", lock):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), timeout=max(self.idle_poll, 1.0) * 2)
                if stop.is_set():
                    return
            beat = asyncio.create_task(self._beat(stop), name=f"heartbeat:{self.reader.name}")
            try:
                self.status.say("opening")
                await self.reader.open(self.status.say)
                try:
                    self.status.say("following")
                    await self._follow(conn, stop)
                finally:
                    await self.reader.close()
                    self._sent = None  # unsettled: its position was not moved, a leader re-sends
            finally:
                beat.cancel()
                await asyncio.gather(beat, return_exceptions=True)
                if connected(conn):
                    await conn.execute("SELECT pg_advisory_unlock(hashtext($1))", lock)

    async def _follow(self, conn: Connection, stop: asyncio.Event) -> None:
        wake = asyncio.Event()

        def on_notify(*_: object) -> None:
            wake.set()

        await conn.add_listener(EVENTS_TABLE, on_notify)
        try:
            while not stop.is_set():
                wake.clear()
                await self.release_requested(conn)
                while await self.step(conn) and not stop.is_set():
                    pass
                await self._settle(conn)  # stopped with a page on its way
                self.status.say("following")
                await first_of(wake, stop, timeout=self.idle_poll)
        finally:
            if connected(conn):
                await conn.remove_listener(EVENTS_TABLE, on_notify)

    async def _beat(self, stop: asyncio.Event) -> None:
        """Tells other processes (``feedbackloop status``) this reader is alive, and how."""
        while not stop.is_set():
            self.status.changed.clear()
            with contextlib.suppress(Exception):  # a missed beat reads as "not seen lately"
                await self.pool.execute(
                    "UPDATE reader_positions SET heartbeat_at = now(), state = $2 "
                    "WHERE reader = $1",
                    self.reader.name,
                    self.status.state,
                )
            await first_of(stop, self.status.changed, timeout=self.heartbeat)

    async def _register(self, conn: Connection) -> None:
        await conn.execute(
            "INSERT INTO reader_positions (reader) VALUES ($1) ON CONFLICT DO NOTHING",
            self.reader.name,
        )

    # -- one page of the log ---------------------------------------------------------------

    async def step(self, conn: Connection) -> bool:
        """Apply the next page of the log; False when caught up."""
        if self._pipelined:
            return await self._step_pipelined(conn)
        position = await read_position(conn, self.reader.name)
        page = await self._page(position)
        upto, notifications = page.upto, page.notifications
        self.status.position, self.status.head = position, max(upto, self.status.head)
        if upto <= position:
            self._measure()
            return False
        self._read_ahead(page)
        parked = await self._parked_aggregates(conn)
        try:
            ready, behind = self._ready(page, parked)
            await self._commit(conn, ready, upto, park_behind=behind)
        except Exception as error:
            if is_transient(error):
                raise
            await self._one_by_one(conn, notifications, upto, parked, error)
        self.status.position = upto
        self._measure()
        return True

    async def _step_pipelined(self, conn: Connection) -> bool:
        """``step`` for a pipelined reader: hand this page over, then settle the page before
        it (its acknowledgement, then the position), so building one page overlaps waiting
        for the other."""
        position = await read_position(conn, self.reader.name)
        if self._sent is not None and self._sent.after != position:
            await self._settle(conn)  # the position moved under it: settle it first
            position = await read_position(conn, self.reader.name)
        start = position if self._sent is None else self._sent.upto
        page = await self._page(start)
        upto, notifications = page.upto, page.notifications
        self.status.head = max(upto, self.status.head)
        if upto <= start:
            if self._sent is None:
                self.status.position = position
                self._measure()
                return False
            await self._settle(conn)
            return True
        self._read_ahead(page)
        aggregates = {n.originator_id for n in notifications}
        if self._sent is not None and not self._sent.aggregates.isdisjoint(aggregates):
            # An aggregate of this page is on its way: settle it first, and only then ask
            # what is parked (its failure may park the aggregate, and this page behind it).
            await self._settle(conn)
        parked = await self._parked_aggregates(conn)
        try:
            ready, behind = self._ready(page, parked)
            acknowledged = await self._hand_over(ready)
        except Exception as error:
            if is_transient(error):
                raise
            await self._settle(conn)  # the pages before, in order
            await self._one_by_one(conn, notifications, upto, parked, error)
            self.status.position = upto
            self._measure()
            return True
        if behind:  # else every event of the page is on its way: the set made above
            aggregates = {p.event.originator_id for p in ready}
        before, self._sent = (
            self._sent,
            Sent(start, upto, notifications, ready, behind, acknowledged, aggregates),
        )
        if before is not None:
            await self._settle(conn, before)
        return True

    async def _hand_over(self, ready: list[Positioned]) -> "asyncio.Future[None]":
        if not ready:
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            done.set_result(None)
            return done
        assert isinstance(self.reader, Pipelined)
        return await self.reader.send(ready)

    async def _settle(self, conn: Connection, sent: "Sent | None" = None) -> None:
        """Wait for a handed-over page's acknowledgement and move the position past it; if it
        failed, apply it one by one (parking what keeps failing), as a failed batch is."""
        if sent is None:
            sent, self._sent = self._sent, None
            if sent is None:
                return
        try:
            await sent.acknowledged
            await self._advance(conn, sent.ready, sent.upto, park_behind=sent.behind)
        except Exception as error:
            if is_transient(error):
                raise
            parked = await self._parked_aggregates(conn)
            await self._one_by_one(conn, sent.notifications, sent.upto, parked, error)
        self.status.position = sent.upto
        self._measure()

    def _read_ahead(self, page: Page) -> None:
        """Behind (a full page): read the next page while this one is applied."""
        if len(page.notifications) == self.batch_size:
            read = asyncio.ensure_future(self._read(page.upto))
            read.add_done_callback(lambda done: done.cancelled() or done.exception())
            self._ahead = (page.upto, read)

    @staticmethod
    def _ready(page: Page, parked: set[UUID]) -> tuple[list[Positioned], list[Notification]]:
        """The page's events to apply, and the notifications that wait behind a parked event
        of their aggregate; an event that cannot be decoded raises here. With nothing parked
        (the usual case) no aggregate is looked up: a UUID's hash is a Python call, and two
        lookups an event were about 2 % of the relay's CPU (issue 12, figure 5)."""
        if not parked:
            return [decoded.event() for decoded in page.decoded], []
        ready = [
            decoded.event()
            for n, decoded in zip(page.notifications, page.decoded, strict=True)
            if n.originator_id not in parked
        ]
        behind = [n for n in page.notifications if n.originator_id in parked]
        return ready, behind

    async def catch_up(
        self, conn: Connection, progress: Callable[[int], None] | None = None
    ) -> None:
        """Step until caught up (a rebuild; tests). The caller holds ``conn``."""
        await self._register(conn)
        while await self.step(conn):
            if progress is not None:
                progress(self.status.position)

    async def _read(self, after: int) -> "Page":
        """The page after ``after``, read and decoded in a thread: while a catch-up's thread
        decodes the next page, the loop waits on PostgreSQL writing this one."""
        return await asyncio.to_thread(read_page, self.store, after, self.batch_size, self._topics)

    async def _page(self, position: int) -> "Page":
        """The page after ``position``: the one read ahead if it starts there (a catch-up
        overlaps reading the log with applying the page before), else read now."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            start, read = ahead
            if start == position:
                return await read
            read.cancel()
            await asyncio.gather(read, return_exceptions=True)
        return await self._read(position)

    async def _commit(
        self,
        conn: Connection,
        batch: Sequence[Positioned],
        upto: int,
        park_behind: Sequence[Notification] = (),
        parked_error: BaseException | None = None,
        attempts: int = 0,
    ) -> None:
        """Apply ``batch`` and move to ``upto``; park what must wait, all at once."""
        if batch and not self.reader.transactional:
            await self.reader.apply(conn, batch)
        await self._advance(conn, batch, upto, park_behind, parked_error, attempts)

    async def _advance(
        self,
        conn: Connection,
        batch: Sequence[Positioned],
        upto: int,
        park_behind: Sequence[Notification] = (),
        parked_error: BaseException | None = None,
        attempts: int = 0,
    ) -> None:
        """Move to ``upto`` once ``batch`` was applied (by a transactional reader: here, in
        the position's transaction); park what must wait, all at once."""
        if not self.reader.transactional and not park_behind:
            # Nothing to do in the position's transaction but move it: one statement, one
            # round trip instead of five (BEGIN, lock, UPDATE, NOTIFY, COMMIT). Issue 12: the
            # relay's position moves after every page, and the five were a quarter of its
            # time on a busy PostgreSQL, the loop waiting on them.
            stored = await conn.fetchval(MOVE, self.reader.name, upto)
            if stored is not None:  # else someone got here first
                self.status.applied += sum(1 for p in batch if p.position > stored)
            return
        async with conn.transaction():
            stored = await conn.fetchval(
                "SELECT position FROM reader_positions WHERE reader = $1 FOR UPDATE",
                self.reader.name,
            )
            if upto <= stored:
                return  # someone got here first (a swap, a former leader's last write)
            fresh = [p for p in batch if p.position > stored]
            if fresh and self.reader.transactional:
                await self.reader.apply(conn, fresh)
            self.status.applied += len(fresh)
            for notification in park_behind:
                await self._park(conn, notification, parked_error, attempts)
            await conn.execute(
                "UPDATE reader_positions SET position = $2 WHERE reader = $1",
                self.reader.name,
                upto,
            )
            await conn.execute("SELECT pg_notify($1, $2)", self.reader.name, str(upto))

    async def _one_by_one(
        self,
        conn: Connection,
        notifications: Sequence[Notification],
        upto: int,
        parked: set[UUID],
        error: BaseException,
    ) -> None:
        """A batch failed: apply it event by event, parking what keeps failing."""
        log.warning(
            "%s: a batch of %d failed (%s: %s); applying one by one",
            self.reader.name,
            len(notifications),
            type(error).__name__,
            error,
        )
        for notification in notifications:
            if notification.originator_id in parked:
                await self._commit(conn, [], notification.id, park_behind=[notification])
                continue
            failure = await self._try(conn, notification)
            if failure is not None:
                await self._commit(
                    conn, [], notification.id, [notification], failure, self.attempts
                )
                parked.add(UUID(str(notification.originator_id)))
        await self._commit(conn, [], upto)
        await self._parked_aggregates(conn)  # to count them

    async def _try(self, conn: Connection, notification: Notification) -> BaseException | None:
        """Apply one event with retries; the last error if it never went through."""
        error: BaseException | None = None
        for attempt in range(self.attempts):
            if attempt:
                await asyncio.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                await self._commit(conn, [decode(self.store, notification)], notification.id)
                return None
            except Exception as failure:
                if is_transient(failure):
                    raise
                error = failure
        return error

    # -- parking ---------------------------------------------------------------------------

    async def _parked_aggregates(self, conn: Connection) -> set[UUID]:
        rows = await conn.fetch(
            "SELECT originator_id, count(*) FROM parked_events WHERE reader = $1 "
            "GROUP BY originator_id",
            self.reader.name,
        )
        self.status.parked = sum(row[1] for row in rows)
        return {row[0] for row in rows}

    async def _park(
        self,
        conn: Connection,
        notification: Notification,
        error: BaseException | None,
        attempts: int,
    ) -> None:
        first = await conn.fetchval(
            "SELECT min(position) FROM parked_events WHERE reader = $1 AND originator_id = $2",
            self.reader.name,
            notification.originator_id,
        )
        reason = (
            f"{type(error).__name__}: {error}"[:2000]
            if error is not None
            else f"waits behind the parked event at position {first} of the same aggregate"
        )
        log.error(
            "%s: parked position %d (aggregate %s v%d): %s",
            self.reader.name,
            notification.id,
            notification.originator_id,
            notification.originator_version,
            reason,
        )
        await conn.execute(
            "INSERT INTO parked_events (reader, position, originator_id, originator_version, "
            "topic, error, attempts, behind) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
            "ON CONFLICT (reader, position) DO UPDATE SET error = EXCLUDED.error, "
            "attempts = parked_events.attempts + EXCLUDED.attempts, released = false",
            self.reader.name,
            notification.id,
            notification.originator_id,
            notification.originator_version,
            notification.topic,
            reason,
            attempts,
            None if error is not None else first,
        )
        metrics.READER_PARKED_TOTAL.labels(self.reader.name).inc()

    async def release_requested(self, conn: Connection) -> None:
        """Apply released parked events (``feedbackloop parked retry``), in order per
        aggregate; one that fails again is parked again, and so is all behind it."""
        rows = await conn.fetch(
            "SELECT position, originator_id, released FROM parked_events "
            "WHERE reader = $1 ORDER BY originator_id, position",
            self.reader.name,
        )
        by_aggregate: dict[UUID, list[tuple[int, bool]]] = {}
        for row in rows:
            by_aggregate.setdefault(row["originator_id"], []).append(
                (row["position"], row["released"])
            )
        released = False
        for aggregate, positions in by_aggregate.items():
            if not positions[0][1]:
                continue  # its first parked event was not released: all of it waits
            released = True
            for position, _ in positions:
                if not await self._retry_parked(conn, aggregate, position):
                    break
        if released:
            await self._parked_aggregates(conn)  # to count them

    async def _retry_parked(self, conn: Connection, aggregate: UUID, position: int) -> bool:
        notifications = await asyncio.to_thread(
            lambda: list(
                self.store.recorder.select_notifications(
                    start=position, limit=1, stop=position, inclusive_of_start=True
                )
            )
        )
        error: BaseException | None = None
        for attempt in range(self.attempts):
            if attempt:
                await asyncio.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                event = [decode(self.store, n) for n in notifications]
                if not self.reader.transactional:
                    await self.reader.apply(conn, event)
                async with conn.transaction():
                    if self.reader.transactional:
                        await self.reader.apply(conn, event)
                    await conn.execute(
                        "DELETE FROM parked_events WHERE reader = $1 AND position = $2",
                        self.reader.name,
                        position,
                    )
                log.info("%s: parked position %d applied on retry", self.reader.name, position)
                return True
            except Exception as failure:
                if is_transient(failure):
                    raise
                error = failure
        async with conn.transaction():
            await conn.execute(
                "UPDATE parked_events SET released = false "
                "WHERE reader = $1 AND originator_id = $2",
                self.reader.name,
                aggregate,
            )
            await conn.execute(
                "UPDATE parked_events SET attempts = attempts + $3, error = $4 "
                "WHERE reader = $1 AND position = $2",
                self.reader.name,
                position,
                self.attempts,
                f"{type(error).__name__}: {error}"[:2000],
            )
        log.error("%s: parked position %d failed again: %s", self.reader.name, position, error)
        return False

    def _measure(self) -> None:
        name = self.reader.name
        metrics.READER_POSITION.labels(name).set(self.status.position)
        metrics.READER_LAG.labels(name).set(self.status.lag)
        metrics.READER_PARKED.labels(name).set(self.status.parked)


async def wait_for_position(pool: asyncpg.Pool, reader: str, at_least: int, timeout: float) -> int:
    """Wait until the reader has applied ``at_least`` (read-your-writes); returns the position
    reached, which is below ``at_least`` only when the timeout ran out.

    A waiter holds exactly one connection of ``pool``: the position is read on the one that
    LISTENs. Taking a second one would let as many waiters as the pool has connections hold
    them all while each waits for another (a role's pool is small: services/processes/roles.py)."""
    position = await read_position(pool, reader)
    if position >= at_least:
        return position
    reached = asyncio.Event()

    def on_notify(*_: object) -> None:
        reached.set()

    async with pool.acquire() as conn:
        await conn.add_listener(reader, on_notify)
        try:
            async with asyncio.timeout(timeout):
                while True:
                    reached.clear()  # before reading, so a NOTIFY meanwhile is not lost
                    position = await read_position(conn, reader)
                    if position >= at_least:
                        break
                    await reached.wait()
        except TimeoutError:
            pass
        finally:
            await conn.remove_listener(reader, on_notify)
    return position
