"""One active follower per reader: a PostgreSQL advisory lock held by its connection. Others
stand by and take over when that session ends."""

import asyncio
import contextlib
from collections.abc import AsyncIterator

from services.followers.reader import Connection
from services.followers.transient import connected


@contextlib.asynccontextmanager
async def leading(
    conn: Connection, reader: str, stop: asyncio.Event, poll: float
) -> AsyncIterator[bool]:
    """Hold the reader's lock on ``conn`` for the block, waiting for it every ``poll``
    seconds; yields False if stopped before it was held."""
    lock = f"feedbackloop-reader:{reader}"
    while not await conn.fetchval("SELECT pg_try_advisory_lock(hashtext($1))", lock):
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=poll)
        if stop.is_set():
            yield False
            return
    try:
        yield True
    finally:
        if connected(conn):
            await conn.execute("SELECT pg_advisory_unlock(hashtext($1))", lock)
