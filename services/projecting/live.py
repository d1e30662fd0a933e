"""Read models on the log follower.

Each read model lives in its own PostgreSQL schema (``rm_<name>``), and is a reader of the log
named for that schema: a batch of events updates the view AND the reader's position in one
asyncpg transaction (``services.followers.moving``), so a redelivered position is skipped.
"""

from collections.abc import Callable, Iterable, Sequence

import asyncpg
from eventsourcing.utils import get_topic

from projections.read_model import Projection, schema_of
from services.followers.follower import Follower
from services.followers.positions import register
from services.followers.reader import Connection, Positioned
from services.store.event_store import EventStore


def topics_of(handled: Iterable[str | type]) -> list[str]:
    """The event topics a read model names (``handles``, ``order_free``): topic strings, or
    event classes, whose topic is their module path and name."""
    return [event if isinstance(event, str) else get_topic(event) for event in handled]


class ProjectionReader:
    """A read model as a reader of the log; its name is its schema."""

    transactional = True

    def __init__(self, projection: Projection, schema: str | None = None) -> None:
        self.projection = projection
        self.name = schema or schema_of(projection)
        self.topics = topics_of(projection.handles)

    async def open(self, say: Callable[[str], None]) -> None:
        pass

    async def close(self) -> None:
        pass

    async def apply(self, conn: Connection, batch: Sequence[Positioned]) -> None:
        await self.projection.apply(conn, self.name, batch)


class ProjectionRunner:
    """A read model caught up on demand (a rebuild, tests); a live one runs on its own
    supervised follower (``Runtime.start_projections``)."""

    def __init__(
        self,
        store: EventStore,
        pool: asyncpg.Pool,
        projection: Projection,
        *,
        schema: str | None = None,
        batch_size: int = 1000,
    ) -> None:
        self.pool, self.projection = pool, projection
        self.schema = schema or schema_of(projection)
        reader = ProjectionReader(projection, self.schema)
        self.follower = Follower(store, pool, reader, batch_size=batch_size)

    async def start(self) -> None:
        await ensure_schema(self.pool, self.projection, self.schema)

    async def catch_up(self, progress: Callable[[int], None] | None = None) -> int:
        """Apply everything up to the head; returns how many events it applied."""
        before = self.follower.status.applied
        async with self.pool.acquire() as conn:
            await self.follower.catch_up(conn, progress)
        return self.follower.status.applied - before


def indexes_of(projection: Projection, schema: str) -> str:
    """The read model's secondary indexes, if it declares any (``indexes(schema)``): those
    that only serve reads, so that a rebuild may create them after loading."""
    declared: Callable[[str], str] | None = getattr(projection, "indexes", None)
    return declared(schema) if declared is not None else ""


async def ensure_schema(
    pool: asyncpg.Pool, projection: Projection, schema: str, *, indexed: bool = True
) -> None:
    async with pool.acquire() as conn, conn.transaction():
        # Several processes may start at once: serialise the DDL on a lock named for it.
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", schema)
        await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        await conn.execute(projection.ddl(schema))
        if indexed and (indexes := indexes_of(projection, schema)):
            await conn.execute(indexes)
        await register(conn, schema)
