"""The one follower of the notification log: every reader of the store runs on it.

A *reader* (the relay, each read model, the hand-over webhook, every process manager) says
which event topics it reads and how to apply a batch (``services.followers.reader``); the
follower owns the rest, each in a module of its own:

- **position**: one row per reader, moved forward only, in the same transaction as the
  reader's own writes (for transactional readers) or right after them (``positions``,
  ``moving``);
- **leadership**: one active follower per reader; others stand by (``leadership``);
- **wake**: LISTEN on the store's NOTIFY channel, polling as a fallback;
- **stepping**: a page of the log at a time (``stepping``; a pipelined reader's in
  ``pipelining``);
- **parking**: an event the reader keeps failing on is parked with its reason and the reader
  goes on; later events of the same aggregate are parked behind it (``parking``); released
  ones are applied in order (``releasing``);
- **heartbeat**: what the reader does, for any process to read (``heartbeats``).

A reader may hold more than its leadership while it leads (``Reader.holding``: the relay's
layout) and read only its share of a page (``Reader.select``: a share of the relay).
"""

import asyncio
import contextlib
import logging
from collections.abc import Callable

import asyncpg
from tenacity import RetryCallState

from services.followers.heartbeats import Beat, beating, first_set
from services.followers.leadership import leading
from services.followers.pipelining import PipelinedStepper
from services.followers.positions import register
from services.followers.reader import PAGE_SIZE, Connection, Pipelined, Reader
from services.followers.releasing import Releaser
from services.followers.retrying import standing_by
from services.followers.status import ReaderStatus
from services.followers.stepping import Stepper
from services.followers.transient import connected
from services.store.event_store import EVENTS_TABLE, EventStore

log = logging.getLogger(__name__)


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
        pipelined = isinstance(reader, Pipelined) and not reader.transactional
        self.stepper = (PipelinedStepper if pipelined else Stepper)(
            store,
            reader,
            self.status,
            batch_size=self.batch_size,
            attempts=attempts,
            backoff=backoff,
        )
        self.releaser = Releaser(store, reader, self.status, attempts, backoff)

    async def run(self, stop: asyncio.Event) -> None:
        """Stand by until leader, then follow until stopped; a transient failure sends it back
        to standby after a pause that grows (``retrying.standing_by``)."""

        def standing_by_after(state: RetryCallState) -> None:
            error = state.outcome.exception() if state.outcome else None
            self.status.say(f"retrying: {type(error).__name__}: {error}")
            log.warning(
                "%s: %s; standing by for %.1f s", self.reader.name, error, state.upcoming_sleep
            )

        async for attempt in standing_by(self.backoff, stop, standing_by_after):
            with attempt:
                if not stop.is_set():
                    await self._lead(stop)

    async def _lead(self, stop: asyncio.Event) -> None:
        async with self.pool.acquire() as conn:
            await register(conn, self.reader.name)
            self.status.say("standby")
            poll = max(self.idle_poll, 1.0) * 2
            async with leading(conn, self.reader.name, stop, poll) as leader:
                if not leader:
                    return
                beat = asyncio.create_task(
                    beating(
                        self.pool,
                        self.reader.name,
                        lambda: Beat(self.status.state),
                        self.status.changed,
                        every=self.heartbeat,
                        stop=stop,
                    ),
                    name=f"heartbeat:{self.reader.name}",
                )
                try:
                    self.status.say("opening")
                    async with self._holding(conn):
                        await self.reader.open(self.status.say)
                        try:
                            self.status.say("following")
                            await self._follow(conn, stop)
                        finally:
                            await self.reader.close()
                            self.stepper.forget_unsettled()
                finally:
                    beat.cancel()
                    await asyncio.gather(beat, return_exceptions=True)

    def _holding(self, conn: Connection) -> contextlib.AbstractAsyncContextManager[object]:
        """What the reader holds besides its leadership while it leads, if anything."""
        holding = getattr(self.reader, "holding", None)
        return contextlib.nullcontext() if holding is None else holding(conn, self.status.say)

    async def _follow(self, conn: Connection, stop: asyncio.Event) -> None:
        wake = asyncio.Event()

        def on_notify(*_: object) -> None:
            wake.set()

        await conn.add_listener(EVENTS_TABLE, on_notify)
        try:
            while not stop.is_set():
                wake.clear()
                await self.releaser.apply_released(conn)
                while await self.step(conn) and not stop.is_set():
                    pass
                await self.stepper.settle(conn)  # stopped with a page on its way
                self.status.say("following")
                await first_set(wake, stop, timeout=self.idle_poll)
        finally:
            if connected(conn):
                await conn.remove_listener(EVENTS_TABLE, on_notify)

    async def step(self, conn: Connection) -> bool:
        """Apply the next page of the log; False when caught up."""
        return await self.stepper.step(conn)

    async def release_requested(self, conn: Connection) -> None:
        """Apply released parked events (``feedbackloop parked retry``)."""
        await self.releaser.apply_released(conn)

    async def catch_up(
        self, conn: Connection, progress: Callable[[int], None] | None = None
    ) -> None:
        """Step until caught up (a rebuild; tests). The caller holds ``conn``."""
        await register(conn, self.reader.name)
        while await self.step(conn):
            if progress is not None:
                progress(self.status.position)
