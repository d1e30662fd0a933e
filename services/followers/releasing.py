"""Released parked events (``feedbackloop parked retry``) applied by the live follower, in
order per aggregate; one that fails again is parked again, and so is all behind it."""

import asyncio
import logging
from uuid import UUID

from services.followers.decoding import decode
from services.followers.parking import (
    park_again,
    parked_aggregates,
    reason_of,
    released_events,
    unpark,
)
from services.followers.reader import Connection, Reader
from services.followers.retrying import event_attempts, failure_of
from services.followers.status import ReaderStatus
from services.store.event_store import EventStore

log = logging.getLogger(__name__)


class Releaser:
    def __init__(
        self, store: EventStore, reader: Reader, status: ReaderStatus, attempts: int, backoff: float
    ) -> None:
        self.store, self.reader, self.status = store, reader, status
        self.attempts, self.backoff = attempts, backoff

    async def apply_released(self, conn: Connection) -> None:
        released = await released_events(conn, self.reader.name)
        for aggregate, positions in released.items():
            for position in positions:
                if not await self.retried(conn, aggregate, position):
                    break
        if released:
            _, self.status.parked = await parked_aggregates(conn, self.reader.name)

    async def retried(self, conn: Connection, aggregate: UUID, position: int) -> bool:
        """Apply the parked event at ``position`` with retries; whether it went through."""
        notifications = await asyncio.to_thread(
            lambda: list(
                self.store.recorder.select_notifications(
                    start=position, limit=1, stop=position, inclusive_of_start=True
                )
            )
        )

        async def once() -> None:
            event = [decode(self.store, n) for n in notifications]
            if not self.reader.transactional:
                await self.reader.apply(conn, event)
            async with conn.transaction():
                if self.reader.transactional:
                    await self.reader.apply(conn, event)
                await unpark(conn, self.reader.name, position)

        error = await failure_of(event_attempts(self.attempts, self.backoff), once)
        if error is None:
            log.info("%s: parked position %d applied on retry", self.reader.name, position)
            return True
        await park_again(
            conn, self.reader.name, aggregate, position, self.attempts, reason_of(error)
        )
        log.error("%s: parked position %d failed again: %s", self.reader.name, position, error)
        return False
