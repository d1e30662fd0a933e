"""Rebuild = a fresh schema at position 0, caught up in bulk by the same handlers, then swapped
in for the live one by renaming schemas (``services.projecting.swapping``); the live follower
carries on from the new schema's position, so nothing is lost or applied twice.

The bulk catch-up is one shared pass over the log for every read model being rebuilt
(``services.projecting.shared``), with the events a read model applies in any order loaded by
worker processes beside it (``services.projecting.apart``). A read model's primary keys of
insert-only tables are dropped for the pass and its secondary indexes (``indexes``: those no
write relies on) built after it, each once, instead of kept up row by row. What a read model
takes of the events it ``staged`` is made by the worker processes and handed to it by the
shared pass in their place (``services.projecting.staged``).
"""

import asyncio
import logging
import time
from collections.abc import Callable, Sequence

import asyncpg

from projections.read_model import Projection, schema_of
from services.followers.parked import Parked
from services.projecting import apart as workers
from services.projecting.keys import Key, built, insert_only_of, statements
from services.projecting.live import ProjectionRunner, ensure_schema, indexes_of
from services.projecting.shared import REBUILD_PAGE, load_together
from services.projecting.staged import Handed, staged_topics
from services.projecting.swapping import RebuildParked, cleared, swapped
from services.store.event_store import EventStore

log = logging.getLogger(__name__)


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


async def rebuild_many(
    store: EventStore,
    pool: asyncpg.Pool,
    projections: Sequence[Projection],
    *,
    swap: bool = True,
    progress: Callable[[str, int], None] | None = None,
    processes: int = 1,
    database_url: str | None = None,
    even_parked: bool = False,
) -> list[str]:
    """Rebuild read models side by side, each in a fresh schema, then swap each in.

    The log up to its head is read and decoded once for all of them (``load_together``); a
    read model whose page fails there goes on alone on its own follower, from where it got
    to, with the follower's retries and parking. With ``processes`` above one (and the
    ``database_url`` they connect to), the events a read model applies in any order
    (``order_free``) are loaded apart by that many worker processes side by side
    (``services.projecting.apart``); a read model whose events fail there is built afresh on
    its own follower. Returns the schemas that hold the rebuilt models. A rebuilt model that
    parked anything is not swapped in: ``RebuildParked`` names them once every other one is
    (decisions D143); with ``even_parked`` (an erasure's or retention's rebuild) it is.
    """
    if processes > 1 and database_url is None:
        raise ValueError("worker processes need the database_url to connect to")
    fresh = [f"{schema_of(p)}__rebuild" for p in projections]
    every = [
        workers.Apart(
            projection, schema, workers.Apart.topics_of(projection), staged_topics(projection)
        )
        for projection, schema in zip(projections, fresh, strict=True)
    ]
    apart = [part for part in every if processes > 1 and part.every]
    handed = Handed()
    for part in apart:
        if part.staged:
            handed.expect(part.schema)
    # Started now, the workers' imports and connections overlap preparing the fresh schemas.
    pool_apart = None
    if apart:
        assert database_url is not None
        pool_apart = workers.started(database_url, apart, processes, store.data_keys.masters)
    try:
        for schema in fresh:
            await cleared(pool, schema)
        keys: dict[str, list[Key]] = {}
        for projection, schema in zip(projections, fresh, strict=True):
            await ensure_schema(pool, projection, schema, indexed=False)
            async with pool.acquire() as conn:
                keys[schema] = await Key.drop(conn, schema, insert_only_of(projection))
        head = await asyncio.to_thread(store.recorder.max_notification_id) or 0
        reached = Reached(progress, {part.projection.name for part in apart})
        topics_apart = {part.schema: part.every for part in apart}
        unkeyed = frozenset(key.table for schema_keys in keys.values() for key in schema_keys)
        started = time.perf_counter()
        loading = None
        async with asyncio.TaskGroup() as tasks:  # one failing (PostgreSQL away) stops both
            tasks.create_task(
                load_together(
                    store,
                    pool,
                    projections,
                    fresh,
                    keys,
                    head,
                    topics_apart,
                    reached.together,
                    handed,
                )
            )
            if pool_apart is not None:
                loading = tasks.create_task(
                    workers.load_apart(
                        pool_apart, apart, unkeyed, head, processes, reached.apart, handed
                    )
                )
    finally:
        if pool_apart is not None:
            pool_apart.shutdown(wait=False)
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
        # on a connection of its own: PostgreSQL sorts them side by side.
        started = time.perf_counter()
        indexes = [built(pool, index) for index in statements(indexes_of(projection, schema))]
        await asyncio.gather(*(key.add(pool) for key in keys[schema]), *indexes)
        log.info("%s: keys and indexes built in %.1f s", schema, time.perf_counter() - started)
        runner = ProjectionRunner(store, pool, projection, schema=schema, batch_size=REBUILD_PAGE)
        await runner.catch_up(moved)  # what the shared pass left, and what came since
        if not swap:
            return schema
        return await swapped(pool, projection, runner, moved, even_parked=even_parked)

    finished = await asyncio.gather(*map(finish, projections, fresh), return_exceptions=True)
    parked: dict[str, Sequence[Parked]] = {}
    for outcome in finished:
        if isinstance(outcome, RebuildParked):
            parked.update(outcome.parked)
        elif isinstance(outcome, BaseException):
            raise outcome
    if parked:  # the others are swapped in; these are not (decisions D143)
        raise RebuildParked(parked)
    return [schema for schema in finished if isinstance(schema, str)]


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
