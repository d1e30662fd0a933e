"""A rebuild's events that read models apply in any order, loaded by worker processes.

One interpreter reading, decoding and building rows binds a rebuild to one core while
PostgreSQL waits on it. A read model may name the events its ``apply`` only turns into rows of
its ``insert_only`` tables, reading nothing (``order_free``): in what order, and in which
process, they are applied cannot change what it holds. A rebuild hands those to worker
processes, split by position: each worker reads, decodes and applies chunks of the log up to
the head the rebuild started from, while every other event goes through the shared pass in
order (``services.projecting.shared``). A read model's ``staged`` events are decoded here too,
and what it takes of them sent back to the rebuild (``services.projecting.staged``).

A read model whose events fail here (one that cannot be decoded, or that its ``apply``
refuses) is named in the answer, and the rebuild builds it afresh on its own follower, in
order, with the follower's retries and parking. A transient failure (PostgreSQL away) stops
the rebuild, as it does the shared pass.
"""

import asyncio
import itertools
import logging
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import forkserver
from multiprocessing.util import Finalize

import asyncpg
import uvloop

from projections.read_model import UNKEYED, Projection
from services.followers.reader import Positioned
from services.followers.transient import is_transient
from services.projecting.collector import collector_paused
from services.projecting.live import topics_of
from services.projecting.shared import REBUILD_PAGE, Shared
from services.projecting.staged import Handed, staged_topics, staging_of
from services.projecting.timestamps import quick_timestamps
from services.store.event_store import EventStore
from services.store.master_keys import MasterKeys
from services.store.opening import open_store

log = logging.getLogger(__name__)

CHUNK = 50_000  # positions a worker takes at a time, at most: ten pages of the shared pass

Staged = dict[str, list[Positioned]]  # items staged, by schema, in log order
Loaded = tuple[int, list[tuple[str, str]], Staged]  # a chunk's span, failures, staged items


@dataclass(frozen=True)
class Apart:
    """A read model's events loaded apart: their topics (``order_free``), its fresh schema,
    and the topics it stages (``staged``)."""

    projection: Projection
    schema: str
    topics: list[str]
    staged: list[str] = field(default_factory=list)

    @staticmethod
    def topics_of(projection: Projection) -> list[str]:
        return topics_of(getattr(projection, "order_free", ()))

    @property
    def every(self) -> list[str]:
        """Every topic read here for it: none of them is in the shared pass."""
        return self.topics + self.staged


def started(
    database_url: str, parts: Sequence[Apart], processes: int, masters: MasterKeys | None = None
) -> ProcessPoolExecutor:
    """The worker processes that load ``parts``, started now: a worker takes a second or so to
    start (imports, connections), which ``rebuild_many`` spends preparing the fresh schemas
    instead of waiting for it once they are ready."""
    ready([part.projection for part in parts])
    workers = ProcessPoolExecutor(
        processes,
        mp_context=multiprocessing.get_context("forkserver"),  # see ``ready``
        initializer=start,
        # The parent's master keys: a worker opens personal fields as the parent does.
        initargs=(database_url, list(parts), masters),
    )
    for _ in range(processes):  # each call finding no idle worker starts one
        workers.submit(int)
    return workers


async def load_apart(
    workers: ProcessPoolExecutor,
    parts: Sequence[Apart],
    unkeyed: frozenset[str],
    head: int,
    processes: int,
    covered: Callable[[int], None],
    handed: Handed | None = None,
) -> dict[str, str]:
    """Load ``parts`` over positions up to ``head`` in the ``processes`` worker processes
    ``started`` them, a chunk at a time; ``covered`` hears how many positions are done, and
    ``handed`` gets the items staged, in log order. Returns the schemas whose events failed,
    with why. The ``unkeyed`` tables are copied into (``UNKEYED``). The workers are shut down
    at the end."""
    names = ", ".join(part.projection.name for part in parts)
    log.info("%d worker processes load the events of %s apart, up to %d", processes, names, head)
    loop = asyncio.get_running_loop()
    failed: dict[str, str] = {}
    loaded = 0
    chunks = spans(head, processes)
    running: set[asyncio.Future[Loaded]] = set()
    at: dict[asyncio.Future[Loaded], tuple[int, int]] = {}
    ends: dict[int, tuple[int, Staged]] = {}  # chunks done beyond ``prefix``, by their start
    prefix = 0

    def more() -> None:  # two chunks in hand for each worker: none waits for the next
        for span in itertools.islice(chunks, 2 * processes - len(running)):
            future = loop.run_in_executor(workers, load_chunk, *span, unkeyed)
            running.add(future)
            at[future] = span

    try:
        more()
        while running:
            done, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            finished = list(done)
            answers = await asyncio.gather(*finished, return_exceptions=True)
            for future, answer in zip(finished, answers, strict=True):
                if isinstance(answer, BaseException):
                    raise answer  # a worker's transient failure, or a worker killed
                span, failures, staged = answer
                for schema, why in failures:
                    failed.setdefault(schema, why)
                loaded += span
                after, upto = at.pop(future)
                ends[after] = (upto, staged)
            covered(loaded)
            if handed is not None:
                while prefix in ends:
                    prefix, staged = ends.pop(prefix)
                    await handed.add(staged, prefix)
                await handed.room()
            more()
    finally:  # the chunks in hand end (each in a second or so), whatever happened
        await asyncio.gather(*running, return_exceptions=True)
        workers.shutdown(wait=False)
    return failed


def spans(head: int, processes: int) -> Iterator[tuple[int, int]]:
    """The chunks of positions up to ``head`` the workers take in turn: ``CHUNK`` at most,
    smaller as the end nears (a quarter of what is left over the workers, down to a page), so
    that the workers finish together rather than one loading a whole last chunk alone while
    the others wait."""
    after = 0
    while after < head:
        size = min(CHUNK, max(REBUILD_PAGE, (head - after) // (4 * processes)))
        yield after, min(after + size, head)
        after += size


def ready(projections: Sequence[Projection]) -> None:
    """The server that worker processes are forked from, started with what they run imported.

    A fork of the rebuild's own process would copy its event loop's and pools' threads (and
    their locks) mid-flight, so workers start from a clean server process instead; spawned
    workers would each import these modules anew on the cores the rebuild needs. The server
    imports them once, and ``rebuild_many`` starts it before
    preparing the fresh schemas, so the imports overlap PostgreSQL's work. Returns once the
    server is launched (milliseconds); the first worker's start waits for its imports. A
    server already running (an earlier rebuild in this process) is kept. The modules of the
    events loaded apart are imported there too, rather than by each worker as it decodes its
    first event."""
    events = {
        topic.partition(":")[0]
        for p in projections
        for topic in Apart.topics_of(p) + staged_topics(p)
    }
    modules = {__name__, *(type(projection).__module__ for projection in projections), *events}
    multiprocessing.set_forkserver_preload(sorted(modules))
    forkserver.ensure_running()


@dataclass
class Worker:
    """A worker process's own: its event loop, store and connection."""

    loop: asyncio.AbstractEventLoop
    store: EventStore
    conn: asyncpg.Connection
    parts: list[Apart]
    topics: list[str]

    async def load(self, after: int, upto: int) -> tuple[list[tuple[str, str]], Staged]:
        """Positions after ``after`` up to ``upto``, page by page, every read model's events of
        a page in one transaction; returns the schemas whose events failed, with why, and the
        items staged, by schema, in log order.

        The next page is read and decoded in a thread while this one is applied: PostgreSQL
        copies one page's rows while the next is decoded, instead of each waiting for the
        other."""
        failed: dict[str, str] = {}
        staged: Staged = {part.schema: [] for part in self.parts if part.staged}
        loop = asyncio.get_running_loop()
        reading = loop.run_in_executor(None, Shared.read, self.store, after, self.topics, upto)
        try:
            async with quick_timestamps(self.conn):
                while after < upto:
                    page = await reading
                    after = upto if page.upto <= after else page.upto
                    if after < upto:
                        reading = loop.run_in_executor(
                            None, Shared.read, self.store, after, self.topics, upto
                        )
                    await self.apply(page, failed, staged)
        finally:  # the store's one connection is free again before the next chunk reads
            await asyncio.gather(reading, return_exceptions=True)
        return list(failed.items()), staged

    async def apply(self, page: Shared, failed: dict[str, str], staged: Staged) -> None:
        """The page's events of every read model not ``failed`` yet, in one transaction: one
        commit a page rather than one a read model; and what each stages of them, kept once
        that commits. A read model whose events fail is added to ``failed`` and the page
        applied again without it (what the others wrote of it went with the transaction)."""
        applying: Apart | None = None
        made: Staged = {}
        try:
            async with self.conn.transaction():
                for part in self.parts:
                    if part.schema not in failed:
                        applying = part
                        if events := page.of(part.topics):
                            await part.projection.apply(self.conn, part.schema, events)
                        if part.staged and (events := page.of(part.staged)):
                            staging = staging_of(part.projection)
                            assert staging is not None  # its topics come from it
                            made[part.schema] = staging.stage(events)
                applying = None
            for schema, items in made.items():
                staged[schema] += items
        except Exception as error:
            why = f"{type(error).__name__}: {error}"
            if applying is None or is_transient(error):
                raise RuntimeError(why) from None  # picklable, whatever it was
            failed[applying.schema] = why
            await self.apply(page, failed, staged)

    def close(self) -> None:
        self.loop.run_until_complete(self.conn.close())
        self.loop.close()
        self.store.close()


_worker: Worker | None = None  # this worker process's


def start(database_url: str, parts: list[Apart], masters: MasterKeys | None = None) -> None:
    """A worker process's start: its store, connection and loop, kept for every chunk."""
    global _worker
    loop = uvloop.new_event_loop()  # as the API's: the rows' COPY goes through it
    # A worker's commits need not wait for the disk: they fill fresh schemas that nothing
    # reads until the swap, and the swap's own commit is synchronous, which flushes every
    # earlier commit of the log with it. A crash before the swap loses the rebuild either way.
    conn = loop.run_until_complete(
        asyncpg.connect(database_url, server_settings={"synchronous_commit": "off"})
    )
    topics = sorted({topic for part in parts for topic in part.every})
    # The rebuild's process made the store's tables; two workers creating them again at once
    # would race on the catalogue ("tuple concurrently updated"). One connection: a worker
    # reads a page at a time.
    store = open_store(
        database_url, masters, CREATE_TABLE="n", POSTGRES_POOL_SIZE="1", POSTGRES_MAX_OVERFLOW="0"
    )
    _worker = Worker(loop, store, conn, parts, topics)
    Finalize(_worker, _worker.close, exitpriority=10)  # run as the worker process exits


def load_chunk(after: int, upto: int, unkeyed: frozenset[str]) -> Loaded:
    """One chunk of positions, in a worker process: how many it covered, what failed, and
    what was staged. The ``unkeyed`` tables are copied into (``UNKEYED``)."""
    assert _worker is not None, "start() runs first in every worker process"
    UNKEYED.set(unkeyed)  # the loop's task for the chunk starts from this context
    with collector_paused():  # as in the shared pass: pages make no cycles
        failures, staged = _worker.loop.run_until_complete(_worker.load(after, upto))
        return upto - after, failures, staged
