"""Read-your-writes: wait until a reader has applied a position (``wait_for_position``)."""

import asyncio

import asyncpg

from services.followers.positions import read_position


async def wait_for_position(pool: asyncpg.Pool, reader: str, at_least: int, timeout: float) -> int:
    """Wait until the reader has applied ``at_least``; returns the position reached, which is
    below ``at_least`` only when the timeout ran out.

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
