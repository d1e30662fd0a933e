"""A rebuild's staged events: what a read model takes of them made ahead by the worker
processes (``projections.read_model.Staging``), handed to its ``apply`` in log order by the
shared pass in place of the events (decisions D70).

The faster twin of the shared pass reading and decoding those events itself; the worker
processes decode them anyway for the read models that load them in any order.
``tests/integration/test_rebuild_staged.py`` holds a rebuilt read model to the live one.
"""

import asyncio
import heapq
from bisect import bisect_right
from collections.abc import AsyncIterator, Sequence
from operator import attrgetter

import asyncpg

from projections.read_model import Projection, Staging
from services.followers.reader import Connection, Positioned
from services.projecting.live import topics_of


def staging_of(projection: Projection) -> Staging | None:
    staging: Staging | None = getattr(projection, "staged", None)
    return staging


def staged_topics(projection: Projection) -> list[str]:
    staging = staging_of(projection)
    return [] if staging is None else topics_of(staging.handles)


async def made(pool: asyncpg.Pool, staging: Staging, schema: str) -> None:
    """The staging table, in the fresh schema, before the workers start on it."""
    await pool.execute(staging.ddl(schema))


async def dropped(pool: asyncpg.Pool, staging: Staging, schema: str) -> None:
    """The staging table gone: the read model swapped in holds the live model's tables only."""
    await pool.execute(f"DROP TABLE IF EXISTS {schema}.{staging.table}")


# Staged items applied at most at a time: a page of the shared pass may span the whole log
# when its read model's other events are few, and its items should not all be held at once.
PIECE = 5000


class Through:
    """How far the worker processes have loaded every position: the end of the longest run of
    chunks from position 0 all done (they finish out of order). The shared pass reads staged
    items only up to there."""

    def __init__(self) -> None:
        self.upto = 0
        self.moved = asyncio.Condition()

    async def at(self, upto: int) -> None:
        async with self.moved:
            self.upto = max(self.upto, upto)
            self.moved.notify_all()

    async def beyond(self, position: int) -> int:
        """Once the workers are through some position past ``position``: how far."""
        async with self.moved:
            await self.moved.wait_for(lambda: self.upto > position)
            return self.upto


async def pieces(
    conn: Connection,
    staging: Staging,
    schema: str,
    events: Sequence[Positioned],
    after: int,
    upto: int,
    through: Through,
) -> AsyncIterator[tuple[Sequence[Positioned], int]]:
    """A page's ``events`` (positions after ``after`` up to ``upto``) with the items staged
    for those positions, in log order, in pieces of at most ``PIECE`` items, each as soon as
    the workers are through it; with each, the position it brings the read model to."""
    at, taken = after, 0
    while at < upto:
        end = min(upto, await through.beyond(at))
        staged = await staging.staged(conn, schema, at, end, PIECE)
        if len(staged) == PIECE:
            end = staged[-1].position
        ends = bisect_right(events, end, lo=taken, key=attrgetter("position"))
        mine, taken = events[taken:ends], ends
        if not staged:
            yield mine, end
        elif not mine:
            yield staged, end
        else:
            yield list(heapq.merge(mine, staged, key=attrgetter("position"))), end
        at = end
