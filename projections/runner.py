"""Drives one read model from the event store's notification log.

Each read model lives in its own PostgreSQL schema (``rm_<name>``) holding its tables and its
tracking row, so that a batch of events updates the view AND the position in one asyncpg
transaction, and a redelivered position (not greater than the stored one) is skipped.

Rebuild = a fresh schema at position 0, caught up in bulk by the same handlers, then swapped
in for the live one by renaming schemas; the live runner carries on from the new schema's
position, so nothing is lost or applied twice.
"""

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import asyncpg
from asyncpg.pool import PoolConnectionProxy
from eventsourcing.utils import get_topic

from services.store import EVENTS_TABLE, EventStore, read_log

log = logging.getLogger(__name__)

# A connection of the pool, as handlers and listeners receive it.
Connection = asyncpg.Connection | PoolConnectionProxy


@dataclass(frozen=True)
class Positioned:
    position: int
    event: Any


class Projection(Protocol):
    name: str

    @property
    def handles(self) -> tuple[type, ...]:
        """The event classes it reads; nothing else is fetched."""

    def ddl(self, schema: str) -> str: ...

    async def apply(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None: ...


def schema_of(projection: Projection) -> str:
    return f"rm_{projection.name}"


async def ensure_schema(pool: asyncpg.Pool, projection: Projection, schema: str) -> None:
    async with pool.acquire() as conn, conn.transaction():
        # Several processes may start at once: serialise the DDL on a lock named for it.
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", schema)
        await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        await conn.execute(
            f"CREATE TABLE IF NOT EXISTS {schema}.tracking (position bigint NOT NULL);"
            f"INSERT INTO {schema}.tracking SELECT 0 "
            f"WHERE NOT EXISTS (SELECT FROM {schema}.tracking)"
        )
        await conn.execute(projection.ddl(schema))


async def read_position(pool: asyncpg.Pool, schema: str) -> int:
    value = await pool.fetchval(f"SELECT position FROM {schema}.tracking")
    return int(value or 0)


class ProjectionRunner:
    def __init__(
        self,
        store: EventStore,
        pool: asyncpg.Pool,
        projection: Projection,
        *,
        schema: str | None = None,
        batch_size: int = 1000,
    ) -> None:
        self.store = store
        self.pool = pool
        self.projection = projection
        self.schema = schema or schema_of(projection)
        self.batch_size = batch_size
        self._topics = [get_topic(cls) for cls in projection.handles]

    async def start(self) -> None:
        await ensure_schema(self.pool, self.projection, self.schema)

    async def step(self) -> int:
        """Apply the next batch; returns how many events it applied (0 when caught up)."""
        position = await read_position(self.pool, self.schema)
        upto, notifications = await asyncio.to_thread(
            read_log, self.store, position, self.batch_size, self._topics
        )
        log.debug(
            "%s: %d notifications after %d, up to %d",
            self.schema,
            len(notifications),
            position,
            upto,
        )
        if upto <= position:
            return 0
        async with self.pool.acquire() as conn, conn.transaction():
            stored = await conn.fetchval(f"SELECT position FROM {self.schema}.tracking FOR UPDATE")
            if upto <= stored:
                return 0  # another runner got here first
            fresh = [
                Positioned(n.id, self.store.mapper.to_domain_event(n))
                for n in notifications
                if n.id > stored
            ]
            await self.projection.apply(conn, self.schema, fresh)
            await conn.execute(f"UPDATE {self.schema}.tracking SET position = $1", upto)
            await conn.execute("SELECT pg_notify($1, $2)", self.schema, str(upto))
        return len(fresh)

    async def catch_up(self, progress: Callable[[int], None] | None = None) -> int:
        total = 0
        while True:
            before = await read_position(self.pool, self.schema)
            applied = await self.step()
            total += applied
            after = await read_position(self.pool, self.schema)
            if progress is not None:
                progress(after)
            if after == before:
                return total

    async def run(self, stop: asyncio.Event, idle_poll: float = 1.0) -> None:
        """Catch up, then follow the log: woken by the store's NOTIFY, polling as a fallback."""
        await self.start()
        wake = asyncio.Event()

        def on_notify(*_: object) -> None:
            wake.set()

        listener = await self.pool.acquire()
        await listener.add_listener(EVENTS_TABLE, on_notify)
        try:
            while not stop.is_set():
                wake.clear()
                try:
                    await self.catch_up()
                except Exception:  # never silently: say so, and try again on the next wake
                    log.exception("projection %s failed; retrying", self.projection.name)
                waiters = [asyncio.create_task(wake.wait()), asyncio.create_task(stop.wait())]
                await asyncio.wait(waiters, timeout=idle_poll, return_when=asyncio.FIRST_COMPLETED)
                for task in waiters:
                    task.cancel()
        finally:
            await listener.remove_listener(EVENTS_TABLE, on_notify)
            await self.pool.release(listener)


async def rebuild(
    store: EventStore,
    pool: asyncpg.Pool,
    projection: Projection,
    *,
    swap: bool = True,
    progress: Callable[[int], None] | None = None,
) -> str:
    """Build the read model afresh from position 0; swap it in for the live one if asked.

    Returns the schema that holds the rebuilt model.
    """
    live = schema_of(projection)
    fresh = f"{live}__rebuild"
    await pool.execute(f"DROP SCHEMA IF EXISTS {fresh} CASCADE")
    runner = ProjectionRunner(store, pool, projection, schema=fresh, batch_size=5000)
    await runner.start()
    await runner.catch_up(progress)
    if not swap:
        return fresh
    await ensure_schema(pool, projection, live)
    async with pool.acquire() as conn, conn.transaction():
        # Wait for an in-flight batch of the live runner and hold it off; catch the fresh
        # model up to the end (so the swap never steps back in time), then rename both.
        await conn.execute(f"LOCK TABLE {live}.tracking IN ACCESS EXCLUSIVE MODE")
        await runner.catch_up(progress)
        await conn.execute(f"ALTER SCHEMA {live} RENAME TO {live}__old")
        await conn.execute(f"ALTER SCHEMA {fresh} RENAME TO {live}")
        await conn.execute(f"DROP SCHEMA {live}__old CASCADE")
    return live


async def wait_for_position(pool: asyncpg.Pool, schema: str, at_least: int, timeout: float) -> int:
    """Wait until the read model has applied ``at_least`` (read-your-writes); returns the
    position reached, which is below ``at_least`` only when the timeout ran out."""
    position = await read_position(pool, schema)
    if position >= at_least:
        return position
    reached = asyncio.Event()

    def on_notify(*_: object) -> None:
        reached.set()

    async with pool.acquire() as conn:
        await conn.add_listener(schema, on_notify)
        try:
            async with asyncio.timeout(timeout):
                while True:
                    reached.clear()  # before reading, so a NOTIFY meanwhile is not lost
                    position = await read_position(pool, schema)
                    if position >= at_least:
                        break
                    await reached.wait()
        except TimeoutError:
            pass
        finally:
            await conn.remove_listener(schema, on_notify)
    return position
