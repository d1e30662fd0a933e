"""A non-transactional reader's position moved in one statement
(``services.followers.follower.MOVE``), on a real PostgreSQL: forward only, told on the
reader's channel, and left where it is when someone got further first (a swap, a former
leader's last write)."""

import asyncio

from services.followers.follower import Follower, Positioned, ensure_tables, read_position
from services.processes.bootstrap import Runtime
from tests.integration.test_follower import Recorder


async def test_the_position_moves_forward_only_and_says_so(runtime: Runtime) -> None:
    reader = Recorder("mover", transactional=False)
    follower = Follower(runtime.store, runtime.pool, reader)
    heard: list[str] = []

    def hear(*args: object) -> None:
        heard.append(str(args[3]))  # (connection, pid, channel, payload)

    async with runtime.pool.acquire() as conn, runtime.pool.acquire() as listener:
        await ensure_tables(conn)
        await conn.execute(
            "INSERT INTO reader_positions (reader) VALUES ($1) ON CONFLICT DO NOTHING", "mover"
        )
        await listener.add_listener("mover", hear)
        try:
            batch = [Positioned(p, object()) for p in (3, 5, 9)]
            await follower._advance(conn, batch, 9)
            assert await read_position(runtime.pool, "mover") == 9
            assert follower.status.applied == 3
            await follower._advance(conn, batch, 4)  # behind: someone got further first
            assert await read_position(runtime.pool, "mover") == 9
            assert follower.status.applied == 3
            await follower._advance(conn, [Positioned(12, object())], 12)
            assert await read_position(runtime.pool, "mover") == 12
            async with asyncio.timeout(5):
                while len(heard) < 2:
                    await asyncio.sleep(0.02)
            assert heard == ["9", "12"]  # nothing said for the move that did not happen
        finally:
            await listener.remove_listener("mover", hear)
