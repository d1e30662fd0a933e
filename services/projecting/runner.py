"""Read models on the log follower.

Each read model lives in its own PostgreSQL schema (``rm_<name>``), and is a reader of the log
named for that schema: a batch of events updates the view AND the reader's position in one
asyncpg transaction (the follower's), so a redelivered position is skipped.

Rebuild = a fresh schema at position 0, caught up in bulk by the same handlers, then swapped
in for the live one by renaming schemas; the live follower carries on from the new schema's
position, so nothing is lost or applied twice. A read model's secondary indexes (``indexes``,
optional: those no write relies on) are built once after the bulk catch-up, not kept up row by
row during it. Issue 12 measured both: kept up, PostgreSQL's work overlaps Python's and 200,000
events went faster (no serial tail of about 2 s), but 1,000,000 went slower (48 s against
37 s of loading and 5 s of building).
"""

import asyncio
import gc
import heapq
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from operator import attrgetter, itemgetter

import asyncpg
from eventsourcing.utils import get_topic

from projections.read_model import UNKEYED, Projection, schema_of
from projections.timestamps import quick_timestamps
from services.followers.follower import (
    Connection,
    Follower,
    Positioned,
    decode,
    is_transient,
    read_position,
)
from services.store.event_store import EventStore
from services.store.log_reading import read_log

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Key:
    """A primary key a rebuild drops before loading its table and adds back after."""

    table: str  # schema.table
    name: str
    columns: str  # comma-separated

    @classmethod
    async def drop(cls, conn: Connection, schema: str, tables: Sequence[str]) -> list["Key"]:
        """Drop the primary keys of ``tables`` (of ``schema``); returns them, to add back."""
        keys = []
        for table in (f"{schema}.{name}" for name in tables):
            row = await conn.fetchrow(
                "SELECT c.conname, (SELECT string_agg(quote_ident(a.attname), ', ' "
                "ORDER BY k.n) FROM unnest(c.conkey) WITH ORDINALITY k(attnum, n) "
                "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum) "
                "FROM pg_constraint c WHERE c.contype = 'p' AND c.conrelid = $1::regclass",
                table,
            )
            if row is not None:
                await conn.execute(f"ALTER TABLE {table} DROP CONSTRAINT {row[0]}")
                keys.append(cls(table, *row))
        return keys

    async def add(self, pool: asyncpg.Pool) -> None:
        """Add the key back: its index built first (beside the table's other indexes, which
        a unique index does not lock out), then made the key.

        Should a value be there twice (which an insert-only table, keyed by the id of the
        event that made the row, never holds), the rows after the first in the table's order
        go, as ``ON CONFLICT DO NOTHING`` would have kept the first written."""
        build = f"CREATE UNIQUE INDEX {self.name} ON {self.table} ({self.columns})"
        try:
            await built(pool, build)
        except asyncpg.UniqueViolationError:
            log.warning("%s: a key's value loaded twice; keeping its first row", self.table)
            await pool.execute(
                f"DELETE FROM {self.table} t USING (SELECT ctid, row_number() OVER "
                f"(PARTITION BY {self.columns} ORDER BY ctid) AS n FROM {self.table}) d "
                "WHERE t.ctid = d.ctid AND d.n > 1"
            )
            await built(pool, build)
        await pool.execute(
            f"ALTER TABLE {self.table} ADD CONSTRAINT {self.name} "
            f"PRIMARY KEY USING INDEX {self.name}"
        )


def indexes_of(projection: Projection, schema: str) -> str:
    """The read model's secondary indexes, if it declares any (``indexes(schema)``): those
    that only serve reads, so that a rebuild may create them after loading."""
    declared: Callable[[str], str] | None = getattr(projection, "indexes", None)
    return declared(schema) if declared is not None else ""


class ProjectionReader:
    """A read model as a reader of the log; its name is its schema."""

    transactional = True

    def __init__(self, projection: Projection, schema: str | None = None) -> None:
        self.projection = projection
        self.name = schema or schema_of(projection)
        self.topics = [c if isinstance(c, str) else get_topic(c) for c in projection.handles]

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
        await conn.execute(
            "INSERT INTO reader_positions (reader) VALUES ($1) ON CONFLICT DO NOTHING", schema
        )
        if await conn.fetchval("SELECT to_regclass($1) IS NOT NULL", f"{schema}.tracking"):
            # Before the log follower, a read model kept its position in its own schema.
            await conn.execute(
                f"UPDATE reader_positions SET position = t.position FROM {schema}.tracking t "
                "WHERE reader = $1 AND reader_positions.position < t.position",
                schema,
            )
            await conn.execute(f"DROP TABLE {schema}.tracking")


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
    moved = None if progress is None else (lambda _name, position: progress(position))
    (schema,) = await rebuild_many(store, pool, [projection], swap=swap, progress=moved)
    return schema


REBUILD_PAGE = 5000
AHEAD = 2  # pages a read model may have waiting in a rebuild


@dataclass(frozen=True)
class Shared:
    """A page of the log read and decoded once for every read model being rebuilt, its events
    grouped by topic (each read model takes those of its own).

    An event that could not be decoded is kept as its error under its topic: it fails the page
    of every read model reading that topic, as the follower's own page would (``Decoded``).
    Issue 12: wrapping every event in a ``Decoded`` beside its ``Positioned`` cost about 3 of
    a rebuild's 50 µs of CPU an event (py-spy); here only a failure costs anything."""

    upto: int
    by_topic: dict[str, list[Positioned]]
    failed: dict[str, tuple[int, Exception]]  # a topic's first undecodable event: position, why

    @classmethod
    def read(
        cls, store: EventStore, after: int, topics: list[str], head: int | None = None
    ) -> "Shared":
        upto, notifications = read_log(store, after, REBUILD_PAGE, topics, head)
        by_topic: dict[str, list[Positioned]] = {}
        failed: dict[str, tuple[int, Exception]] = {}
        topic, events = "", list[Positioned]()
        for notification in notifications:
            if notification.topic != topic:  # pages mostly hold long runs of one topic
                topic = notification.topic
                events = by_topic.setdefault(topic, [])
            try:
                events.append(decode(store, notification))
            except Exception as error:
                failed.setdefault(topic, (notification.id, error))
        return cls(upto, by_topic, failed)

    def of(self, topics: Sequence[str]) -> list[Positioned]:
        """The events of these topics, in log order; raises why the first of them that could
        not be decoded could not be."""
        if failures := [self.failed[topic] for topic in topics if topic in self.failed]:
            raise min(failures, key=itemgetter(0))[1]
        present = [self.by_topic[topic] for topic in topics if topic in self.by_topic]
        if len(present) <= 1:  # the common case: no merging
            return present[0] if present else []
        return list(heapq.merge(*present, key=attrgetter("position")))


async def rebuild_many(
    store: EventStore,
    pool: asyncpg.Pool,
    projections: Sequence[Projection],
    *,
    swap: bool = True,
    progress: Callable[[str, int], None] | None = None,
    processes: int = 1,
    database_url: str | None = None,
) -> list[str]:
    """Rebuild read models side by side, each in a fresh schema, then swap each in.

    The log up to its head is read and decoded once for all of them (``load_together``); a
    read model whose page fails there goes on alone on its own follower, from where it got
    to, with the follower's retries and parking. With ``processes`` above one (and the
    ``database_url`` they connect to), the events a read model applies in any order
    (``order_free``) are loaded apart by that many worker processes side by side
    (``services.projecting.apart``); a read model whose events fail there is built afresh on its own
    follower. Returns the schemas that hold the rebuilt models.
    """
    from services.projecting.apart import (  # it builds on this module's pass
        Apart,
        load_apart,
        ready,
    )

    if processes > 1 and database_url is None:
        raise ValueError("worker processes need the database_url to connect to")
    if processes > 1:  # its imports run while the fresh schemas are prepared
        ready([p for p in projections if Apart.topics_of(p)])
    fresh = [f"{schema_of(p)}__rebuild" for p in projections]
    for schema in fresh:
        await cleared(pool, schema)
    keys: dict[str, list[Key]] = {}
    for projection, schema in zip(projections, fresh, strict=True):
        await ensure_schema(pool, projection, schema, indexed=False)
        async with pool.acquire() as conn:
            keys[schema] = await Key.drop(conn, schema, insert_only_of(projection))
    head = await asyncio.to_thread(store.recorder.max_notification_id) or 0
    apart = [
        Apart(projection, schema, topics)
        for projection, schema in zip(projections, fresh, strict=True)
        if processes > 1 and (topics := Apart.topics_of(projection))
    ]
    reached = Reached(progress, {part.projection.name for part in apart})
    topics_apart = {part.schema: part.topics for part in apart}
    unkeyed = frozenset(key.table for schema_keys in keys.values() for key in schema_keys)
    started = time.perf_counter()
    loading = None
    async with asyncio.TaskGroup() as tasks:  # one failing (PostgreSQL away) stops both
        tasks.create_task(
            load_together(store, pool, projections, fresh, keys, head, topics_apart, reached)
        )
        if apart:
            assert database_url is not None
            loading = tasks.create_task(
                load_apart(database_url, apart, unkeyed, head, processes, reached.apart)
            )
    failed = loading.result() if loading is not None else {}
    for part in apart:
        if why := failed.get(part.schema):
            log.warning(
                "%s: its events loaded apart failed (%s); it is built afresh on its own",
                part.schema,
                why,
            )
            await cleared(pool, part.schema)
            await ensure_schema(pool, part.projection, part.schema)  # keyed and indexed
            keys[part.schema] = []
    log.info("loaded up to %d in %.1f s", head, time.perf_counter() - started)

    async def finish(projection: Projection, schema: str) -> str:
        moved = None if progress is None else (lambda at: progress(projection.name, at))
        # The keys back (the follower's writes look for conflicts) and the indexes built, each
        # on a connection of its own: PostgreSQL sorts them side by side (issue 12: a million
        # rows' four indexes took 8-10 s so against 15-20 one after another).
        started = time.perf_counter()
        indexes = [built(pool, index) for index in statements(indexes_of(projection, schema))]
        await asyncio.gather(*(key.add(pool) for key in keys[schema]), *indexes)
        log.info("%s: keys and indexes built in %.1f s", schema, time.perf_counter() - started)
        runner = ProjectionRunner(store, pool, projection, schema=schema, batch_size=REBUILD_PAGE)
        await runner.catch_up(moved)  # what the shared pass left, and what came since
        return await swapped(pool, projection, runner, moved) if swap else schema

    return list(await asyncio.gather(*map(finish, projections, fresh)))


class Reached:
    """A rebuild's progress for each read model: where the shared pass got to, or, for one
    with events loaded apart, the lesser of that and how many positions the workers have
    covered (their chunks finish out of order)."""

    def __init__(self, progress: Callable[[str, int], None] | None, apart: set[str]) -> None:
        self.progress = progress
        self.with_apart = apart  # names of the read models with events loaded apart
        self.at: dict[str, int] = {}
        self.covered = 0

    def together(self, name: str, position: int) -> None:
        self.at[name] = position
        self.say(name)

    def apart(self, covered: int) -> None:
        self.covered = covered
        for name in self.with_apart:
            self.say(name)

    def say(self, name: str) -> None:
        if self.progress is not None:
            at = self.at.get(name, 0)
            self.progress(name, min(at, self.covered) if name in self.with_apart else at)


async def cleared(pool: asyncpg.Pool, schema: str) -> None:
    """A rebuild's schema gone, with its reader's position and parked events."""
    async with pool.acquire() as conn:
        await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        await conn.execute("DELETE FROM reader_positions WHERE reader = $1", schema)
        await conn.execute("DELETE FROM parked_events WHERE reader = $1", schema)


# Memory for each of a rebuild's index builds: a million rows' index on three text columns
# and a position sorted in 1.7 s with 256 MB against 3.4 s with PostgreSQL's default 64 MB,
# which spilled the sort to disk (issue 12). A rebuild builds its indexes side by side, a
# read model's four at once.
INDEX_MEMORY = "256MB"


async def built(pool: asyncpg.Pool, statement: str) -> None:
    """Run an index-building statement with ``INDEX_MEMORY`` to sort in."""
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(f"SET LOCAL maintenance_work_mem = '{INDEX_MEMORY}'")
        await conn.execute(statement)


def statements(sql: str) -> list[str]:
    """The statements of DDL text (ours: no semicolon inside one)."""
    return [statement for part in sql.split(";") if (statement := part.strip())]


def insert_only_of(projection: Projection) -> tuple[str, ...]:
    tables: tuple[str, ...] = getattr(projection, "insert_only", ())
    return tables


async def load_together(
    store: EventStore,
    pool: asyncpg.Pool,
    projections: Sequence[Projection],
    schemas: Sequence[str],
    keys: dict[str, list[Key]],
    head: int,
    apart: dict[str, list[str]],
    reached: "Reached",
) -> None:
    """One pass over the log up to ``head`` for every read model being rebuilt, but for the
    topics each loads ``apart`` (by schema).

    Each page is read and decoded once, in a thread (the next page while this one is being
    applied), and handed to every read model. Each read model applies its pages in order in a
    task of its own, on a connection of its own: one's statements run in PostgreSQL while
    another builds its rows, instead of each waiting for the last. A read model keeps at most
    ``AHEAD`` pages waiting, so memory stays bounded by the slowest; one whose page fails
    leaves the shared pass (``rebuild_many`` lets it go on alone). Its connection sends
    timestamps by ``projections.timestamps``: the same values, in fewer steps. The tables
    whose ``keys`` were dropped are copied into (``UNKEYED``).
    """
    readers = [ProjectionReader(p, s) for p, s in zip(projections, schemas, strict=True)]
    shared = {r.name: [t for t in r.topics if t not in apart.get(r.name, ())] for r in readers}
    topics = sorted({topic for reader_topics in shared.values() for topic in reader_topics})
    inboxes = {reader.name: asyncio.Queue[Shared | None](AHEAD) for reader in readers}
    left: set[str] = set()

    async def feed() -> None:
        position = 0
        page = asyncio.ensure_future(asyncio.to_thread(Shared.read, store, position, topics, head))
        try:
            while len(left) < len(inboxes):  # not once every read model has gone alone
                this = await page
                if this.upto <= position:
                    break
                page = asyncio.ensure_future(
                    asyncio.to_thread(Shared.read, store, this.upto, topics, head)
                )
                for name, inbox in inboxes.items():
                    if name not in left:
                        await inbox.put(this)
                position = this.upto
        finally:
            page.cancel()
        for name, inbox in inboxes.items():
            if name not in left:
                await inbox.put(None)

    async def follow(reader: ProjectionReader) -> None:
        inbox = inboxes[reader.name]
        UNKEYED.set(frozenset(key.table for key in keys[reader.name]))  # this task's only
        async with pool.acquire() as conn, quick_timestamps(conn):
            while (page := await inbox.get()) is not None:
                try:  # an event that could not be decoded fails the page (``Shared.of``)
                    await apply_page(conn, reader, page.of(shared[reader.name]), page.upto)
                except Exception as error:
                    if is_transient(error):
                        raise
                    log.warning(
                        "%s: a page failed in the shared pass (%s: %s); it goes on alone",
                        reader.name,
                        type(error).__name__,
                        error,
                    )
                    left.add(reader.name)
                    while not inbox.empty():  # the feeder may be waiting on this one
                        inbox.get_nowait()
                    return
                reached.together(reader.projection.name, page.upto)

    with collector_paused():
        async with asyncio.TaskGroup() as tasks:  # one failing (PostgreSQL away) stops them all
            tasks.create_task(feed())
            for reader in readers:
                tasks.create_task(follow(reader))


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic collector off for the shared pass, back on after it.

    Issue 12: the pass keeps pages of thousands of events alive while it applies them, and
    each collection walked them again: about a seventh of the pass's CPU (40 -> 34 µs an
    event over 200,000 events, three pairs). It makes no cycles: a collection right after a
    pass of 200,000 events with the collector off found nothing to free, and peak memory was
    the same.
    Whatever a failure leaves in a cycle is collected once the pass ends."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


async def apply_page(
    conn: Connection, reader: "ProjectionReader", events: list[Positioned], upto: int
) -> None:
    """A page's events of one read model, and its position, in one transaction."""
    async with conn.transaction():
        if events:
            await reader.apply(conn, events)
        await conn.execute(
            "UPDATE reader_positions SET position = $2 WHERE reader = $1", reader.name, upto
        )


async def swapped(
    pool: asyncpg.Pool,
    projection: Projection,
    runner: "ProjectionRunner",
    progress: Callable[[int], None] | None,
) -> str:
    """Swap the rebuilt model in for the live one; returns the live schema."""
    live, fresh = schema_of(projection), runner.schema
    await ensure_schema(pool, projection, live)
    async with pool.acquire() as conn, conn.transaction():
        # Hold off the live follower (its transactions lock its position row first), catch
        # the fresh model up to the end (so the swap never steps back in time), then rename.
        await conn.execute(
            "SELECT position FROM reader_positions WHERE reader = $1 FOR UPDATE", live
        )
        await runner.catch_up(progress)
        await conn.execute(f"ALTER SCHEMA {live} RENAME TO {live}__old")
        await conn.execute(f"ALTER SCHEMA {fresh} RENAME TO {live}")
        await conn.execute(f"DROP SCHEMA {live}__old CASCADE")
        await conn.execute(
            "UPDATE reader_positions SET position = $2 WHERE reader = $1",
            live,
            await read_position(conn, fresh),
        )
        await conn.execute("DELETE FROM reader_positions WHERE reader = $1", fresh)
        await conn.execute("DELETE FROM parked_events WHERE reader = $1", live)
        await conn.execute("UPDATE parked_events SET reader = $1 WHERE reader = $2", live, fresh)
        await conn.execute("SELECT pg_notify($1, $2)", live, "swapped")
    return live
