"""A rebuilt read model swapped in for the live one by renaming schemas; a rebuild's schema
cleared before it starts."""

from collections.abc import Callable

import asyncpg

from projections.read_model import Projection, schema_of
from services.followers.parking import forget_parked, hand_over_parked
from services.followers.positions import forget, locked_position, read_position, set_position
from services.projecting.live import ProjectionRunner, ensure_schema


async def cleared(pool: asyncpg.Pool, schema: str) -> None:
    """A rebuild's schema gone, with its reader's position and parked events."""
    async with pool.acquire() as conn:
        await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        await forget(conn, schema)
        await forget_parked(conn, schema)


async def swapped(
    pool: asyncpg.Pool,
    projection: Projection,
    runner: ProjectionRunner,
    progress: Callable[[int], None] | None,
) -> str:
    """Swap the rebuilt model in for the live one; returns the live schema."""
    live, fresh = schema_of(projection), runner.schema
    await ensure_schema(pool, projection, live)
    async with pool.acquire() as conn, conn.transaction():
        # Hold off the live follower (its transactions lock its position row first), catch
        # the fresh model up to the end (so the swap never steps back in time), then rename.
        await locked_position(conn, live)
        await runner.catch_up(progress)
        await conn.execute(f"ALTER SCHEMA {live} RENAME TO {live}__old")
        await conn.execute(f"ALTER SCHEMA {fresh} RENAME TO {live}")
        await conn.execute(f"DROP SCHEMA {live}__old CASCADE")
        await set_position(conn, live, await read_position(conn, fresh), said="swapped")
        await forget(conn, fresh)
        await hand_over_parked(conn, fresh, live)
    return live
