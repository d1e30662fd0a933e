"""A rebuild's staged events: what a read model takes of them, made by the worker processes
(``projections.read_model.Staging``) and handed to its ``apply`` in log order by the shared
pass, in place of the events (decisions D70).

The faster twin of the shared pass reading and decoding those events itself; the worker
processes decode them anyway for the read models that load them in any order.
``tests/integration/test_rebuild_staged.py`` holds a rebuilt read model to the live one.
"""

import asyncio
import heapq
from bisect import bisect_right
from collections import deque
from collections.abc import AsyncIterator, Sequence
from operator import attrgetter

from projections.read_model import Projection, Staging
from services.followers.reader import Positioned
from services.projecting.live import topics_of

# Staged items applied at most at a time: a page of the shared pass may span the whole log
# when its read model's other events are few, and its items should not all be held at once.
PIECE = 5000
# Staged items waiting for the shared pass beyond which no worker is given a new chunk: the
# rebuild's memory stays bounded should the shared pass fall behind.
WAITING = 100_000


def staging_of(projection: Projection) -> Staging | None:
    staging: Staging | None = getattr(projection, "staged", None)
    return staging


def staged_topics(projection: Projection) -> list[str]:
    staging = staging_of(projection)
    return [] if staging is None else topics_of(staging.handles)


class Handed:
    """The worker processes' staged items, by schema, handed over in log order: a chunk's once
    every chunk before it is done too (they finish out of order). ``upto`` is where every
    position has been loaded."""

    def __init__(self) -> None:
        self.upto = 0
        self.items: dict[str, deque[Positioned]] = {}
        self.waiting = 0
        self.moved = asyncio.Condition()

    async def add(self, staged: dict[str, list[Positioned]], upto: int) -> None:
        """A run of chunks done, up to ``upto``: their items, in log order."""
        async with self.moved:
            for schema, items in staged.items():
                if schema in self.items:
                    self.items[schema].extend(items)
                    self.waiting += len(items)
            self.upto = max(self.upto, upto)
            self.moved.notify_all()

    def expect(self, schema: str) -> None:
        """Keep ``schema``'s items: its read model is in the shared pass."""
        self.items[schema] = deque()

    async def leave(self, schema: str) -> None:
        """Its read model left the shared pass: its items are dropped, now and to come."""
        async with self.moved:
            self.waiting -= len(self.items.pop(schema, ()))
            self.moved.notify_all()

    async def beyond(self, position: int) -> int:
        """Once every position up to some past ``position`` is loaded: up to where."""
        async with self.moved:
            await self.moved.wait_for(lambda: self.upto > position)
            return self.upto

    async def room(self) -> None:
        """Once the shared pass has taken all but ``WAITING`` items."""
        async with self.moved:
            await self.moved.wait_for(lambda: self.waiting <= WAITING)

    async def take(self, schema: str, upto: int, limit: int) -> list[Positioned]:
        """The first ``limit`` items of ``schema`` up to ``upto``."""
        items, taken = self.items[schema], list[Positioned]()
        while items and len(taken) < limit and items[0].position <= upto:
            taken.append(items.popleft())
        async with self.moved:
            self.waiting -= len(taken)
            self.moved.notify_all()
        return taken


async def pieces(
    handed: Handed, schema: str, events: Sequence[Positioned], after: int, upto: int
) -> AsyncIterator[tuple[Sequence[Positioned], int]]:
    """A page's ``events`` (positions after ``after`` up to ``upto``) with the items staged
    for those positions, in log order, in pieces of at most ``PIECE`` items, each as soon as
    the workers are through it; with each, the position it brings the read model to."""
    at, taken = after, 0
    while at < upto:
        end = min(upto, await handed.beyond(at))
        staged = await handed.take(schema, end, PIECE)
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
