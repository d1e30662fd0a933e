"""A rebuilt read model swapped in for the live one by renaming schemas; a rebuild's schema
cleared before it starts.

A rebuilt model that parked any event is not swapped in (decisions D143): it lacks what it
parked (a person's events that did not open under the configured master keys, a sealed box
that fails authentication), and swapped in it would answer without them (their reports 404)
while the live one still holds them. It stays in its schema, its parked events under its own
reader, for ``feedbackloop parked list <schema>``; the next rebuild clears it.
"""

import logging
from collections.abc import Callable, Mapping, Sequence

import asyncpg

from projections.read_model import Projection, schema_of
from services.followers.parked import Parked, list_parked
from services.followers.parking import count_parked, forget_parked, hand_over_parked
from services.followers.positions import forget, locked_position, read_position, set_position
from services.projecting.live import ProjectionRunner, ensure_schema

log = logging.getLogger(__name__)


class RebuildParked(Exception):
    """Rebuilt read models that parked events, by their schema, none of them swapped in."""

    def __init__(self, parked: Mapping[str, Sequence[Parked]]) -> None:
        self.parked = dict(parked)
        super().__init__("; ".join(map(said, self.parked.items())))


def said(schema_parked: tuple[str, Sequence[Parked]]) -> str:
    """One rebuilt model's refusal: how many it parked, the first, where to see the rest."""
    schema, parked = schema_parked
    first = parked[0]
    return (
        f"{schema} parked {len(parked)} events and is not swapped in (first: position "
        f"{first.position}, {first.topic}, {first.subject}: {first.error}); the live read "
        f"model keeps answering; feedbackloop parked list {schema}"
    )


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
    *,
    even_parked: bool = False,
) -> str:
    """Swap the rebuilt model in for the live one; returns the live schema. Raises
    ``RebuildParked`` instead when the rebuilt model parked anything (decisions D143), unless
    ``even_parked``: an erasure's rebuild must take the person's words out of the live model
    whatever else it parked, which the live reader then holds parked (and ``/readyz`` says)."""
    live, fresh = schema_of(projection), runner.schema
    await ensure_schema(pool, projection, live)
    async with pool.acquire() as conn, conn.transaction():
        # Hold off the live follower (its transactions lock its position row first), catch
        # the fresh model up to the end (so the swap never steps back in time), then rename.
        await locked_position(conn, live)
        await runner.catch_up(progress)
        parked = await count_parked(conn, fresh)
        if even_parked and parked:
            log.error("%s: swapped in with %d events parked (an erasure's rebuild)", fresh, parked)
        if even_parked or not parked:
            await conn.execute(f"ALTER SCHEMA {live} RENAME TO {live}__old")
            await conn.execute(f"ALTER SCHEMA {fresh} RENAME TO {live}")
            await conn.execute(f"DROP SCHEMA {live}__old CASCADE")
            await set_position(conn, live, await read_position(conn, fresh), said="swapped")
            await forget(conn, fresh)
            # What the live reader parked, the rebuilt one applied: the live rows go.
            await hand_over_parked(conn, fresh, live)
    if parked and not even_parked:
        raise RebuildParked({fresh: await list_parked(pool, fresh)})
    return live
