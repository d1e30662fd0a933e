"""A follower's step: the next page of the log applied to its reader and the position moved
past it (``Stepper``); a page that fails is applied event by event, and an event that keeps
failing is parked with every later event of its aggregate, while other aggregates flow on.

A failure is of one of two kinds. A *transient* one (PostgreSQL or Kafka away, the session
lost) is raised: it says nothing about the event, and the follower stands by to try again.
Anything else is the event's own problem and leads to parking.
"""

import asyncio
import logging
from collections.abc import Sequence
from uuid import UUID

from eventsourcing.persistence import Notification

from services.followers.decoding import Page, decode, read_page
from services.followers.moving import apply_and_move
from services.followers.parking import parked_aggregates
from services.followers.positions import read_position
from services.followers.reader import Connection, Positioned, Reader
from services.followers.retrying import event_attempts, failure_of
from services.followers.status import ReaderStatus, measure
from services.followers.transient import is_transient
from services.store.event_store import EventStore

log = logging.getLogger(__name__)


class Stepper:
    """Applies the log to one reader a page at a time: apply, then move."""

    def __init__(
        self,
        store: EventStore,
        reader: Reader,
        status: ReaderStatus,
        *,
        batch_size: int,
        attempts: int,
        backoff: float,
    ) -> None:
        self.store, self.reader, self.status = store, reader, status
        self.batch_size, self.attempts, self.backoff = batch_size, attempts, backoff
        self._topics = list(reader.topics)
        self._select = getattr(reader, "select", None)  # a share's (``Reader``)
        # The next page, read while the current one is applied: (where it starts, the read).
        self._ahead: tuple[int, asyncio.Future[Page]] | None = None

    async def step(self, conn: Connection) -> bool:
        """Apply the next page of the log; False when caught up."""
        position = await read_position(conn, self.reader.name)
        page = await self.page(position)
        upto, notifications = page.upto, page.notifications
        self.status.position, self.status.head = position, max(upto, self.status.head)
        if upto <= position:
            measure(self.status)
            return False
        self.read_ahead(page)
        parked = await self.parked(conn)
        try:
            ready, behind = self.ready(page, parked)
            await self.commit(conn, ready, upto, park_behind=behind)
        except Exception as error:
            if is_transient(error):
                raise
            await self.one_by_one(conn, notifications, upto, parked, error)
        self.status.position = upto
        measure(self.status)
        return True

    async def settle(self, conn: Connection) -> None:
        """Nothing is ever on its way: a plain step is done when it returns."""

    def forget_unsettled(self) -> None:
        """Nothing is ever on its way: a plain step is done when it returns."""

    # -- pages -----------------------------------------------------------------------------

    async def read(self, after: int) -> Page:
        """The page after ``after``, read and decoded in a thread: while a catch-up's thread
        decodes the next page, the loop waits on PostgreSQL writing this one."""
        return await asyncio.to_thread(
            read_page, self.store, after, self.batch_size, self._topics, self._select
        )

    async def page(self, position: int) -> Page:
        """The page after ``position``: the one read ahead if it starts there (a catch-up
        overlaps reading the log with applying the page before), else read now."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            start, read = ahead
            if start == position:
                return await read
            read.cancel()
            await asyncio.gather(read, return_exceptions=True)
        return await self.read(position)

    def read_ahead(self, page: Page) -> None:
        """Behind (a full page): read the next page while this one is applied."""
        if page.full:
            read = asyncio.ensure_future(self.read(page.upto))
            read.add_done_callback(lambda done: done.cancelled() or done.exception())
            self._ahead = (page.upto, read)

    @staticmethod
    def ready(page: Page, parked: set[UUID]) -> tuple[list[Positioned], list[Notification]]:
        """The page's events to apply, and the notifications that wait behind a parked event
        of their aggregate; an event that cannot be decoded raises here. With nothing parked
        (the usual case) no aggregate is looked up: a UUID's hash is a Python call."""
        if not parked:
            return [decoded.event() for decoded in page.decoded], []
        ready = [
            decoded.event()
            for n, decoded in zip(page.notifications, page.decoded, strict=True)
            if n.originator_id not in parked
        ]
        behind = [n for n in page.notifications if n.originator_id in parked]
        return ready, behind

    # -- applying and moving ----------------------------------------------------------------

    async def parked(self, conn: Connection) -> set[UUID]:
        """The aggregates the reader has parked events of (counted for its status)."""
        aggregates, self.status.parked = await parked_aggregates(conn, self.reader.name)
        return aggregates

    async def commit(
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
        await self.advance(conn, batch, upto, park_behind, parked_error, attempts)

    async def advance(
        self,
        conn: Connection,
        batch: Sequence[Positioned],
        upto: int,
        park_behind: Sequence[Notification] = (),
        parked_error: BaseException | None = None,
        attempts: int = 0,
    ) -> None:
        """Move to ``upto`` once ``batch`` was applied (``apply_and_move``)."""
        self.status.applied += await apply_and_move(
            conn,
            self.reader,
            batch,
            upto,
            park_behind=park_behind,
            parked_error=parked_error,
            attempts=attempts,
        )

    async def one_by_one(
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
                await self.commit(conn, [], notification.id, park_behind=[notification])
                continue
            failure = await self.tried(conn, notification)
            if failure is not None:
                await self.commit(conn, [], notification.id, [notification], failure, self.attempts)
                parked.add(UUID(str(notification.originator_id)))
        await self.commit(conn, [], upto)
        await self.parked(conn)  # to count them

    async def tried(self, conn: Connection, notification: Notification) -> BaseException | None:
        """Apply one event with retries; the last error if it never went through."""

        async def once() -> None:
            await self.commit(conn, [decode(self.store, notification)], notification.id)

        return await failure_of(event_attempts(self.attempts, self.backoff), once)
