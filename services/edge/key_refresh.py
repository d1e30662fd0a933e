"""Keeping a process's KeyRing at the store's keys and grants (decisions D29).

Each API process LISTENs on the access read model's channel (the follower NOTIFYs it in the
transaction that moves the read model) and reads the whole standing again when told: keys
and grants are few, and a read per change costs nothing per request. A request reads only
the ring in memory, as before. A revocation answered to its caller (``caught_up``) is in this
process's ring already; another process hears the same NOTIFY at the same commit.
"""

import asyncio
import contextlib
import logging

import asyncpg

from projections.access import SCHEMA, standing
from services.edge.auth import KeyRing
from services.followers.waiting import wait_for_position

log = logging.getLogger(__name__)
RETRY_SECONDS = 1.0


class KeyRefresher:
    """Moves ``ring`` to the access read model's standing whenever that moves."""

    def __init__(self, pool: asyncpg.Pool, ring: KeyRing) -> None:
        self.pool, self.ring = pool, ring
        self._moved = asyncio.Event()

    async def refresh(self) -> None:
        """Read the standing now and stand the ring on it."""
        self.ring.stand(await standing(self.pool))

    async def run(self, stop: asyncio.Event) -> None:
        """LISTEN, read, and read again on each NOTIFY, until ``stop``; a lost connection
        is opened again and the standing read afresh (a NOTIFY missed meanwhile is not lost:
        the read after it sees the change)."""
        while not stop.is_set():
            try:
                await self._listen(stop)
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
                log.warning("keys: listening failed (%r); trying again", error)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), RETRY_SECONDS)

    async def _listen(self, stop: asyncio.Event) -> None:
        def on_notify(*_: object) -> None:
            self._moved.set()

        async with self.pool.acquire() as conn:
            await conn.add_listener(SCHEMA, on_notify)
            try:
                while not stop.is_set():
                    self._moved.clear()  # before reading, so a NOTIFY meanwhile is kept
                    await self.refresh()
                    moved = asyncio.ensure_future(self._moved.wait())
                    stopped = asyncio.ensure_future(stop.wait())
                    try:
                        await asyncio.wait({moved, stopped}, return_when=asyncio.FIRST_COMPLETED)
                    finally:
                        moved.cancel()
                        stopped.cancel()
            finally:
                with contextlib.suppress(Exception):
                    await conn.remove_listener(SCHEMA, on_notify)

    async def caught_up(self, position: int, timeout: float) -> bool:
        """Wait until the access read model has applied ``position`` (a change this process
        just made), then stand the ring on it; False when ``timeout`` ran out first."""
        if self.ring.standing.position >= position:
            return True
        if await wait_for_position(self.pool, SCHEMA, position, timeout) < position:
            return False
        await self.refresh()
        return self.ring.standing.position >= position
