"""A rebuild's shared pass: the log up to its head read and decoded once for every read model
being rebuilt, each applying its own events of every page in order
(``services.followers.moving.apply_and_move``, the step every reader takes)."""

import asyncio
import heapq
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter, itemgetter

import asyncpg

from projections.read_model import UNKEYED, Projection
from services.followers.decoding import decode
from services.followers.moving import apply_and_move
from services.followers.reader import Positioned
from services.followers.transient import is_transient
from services.projecting.collector import collector_paused
from services.projecting.keys import Key
from services.projecting.live import ProjectionReader
from services.projecting.staged import Handed, pieces
from services.projecting.timestamps import quick_timestamps
from services.store.event_store import EventStore
from services.store.log_reading import read_log

log = logging.getLogger(__name__)

REBUILD_PAGE = 5000
AHEAD = 2  # pages a read model may have waiting in a rebuild


@dataclass(frozen=True)
class Shared:
    """A page of the log read and decoded once for every read model being rebuilt, its events
    grouped by topic (each read model takes those of its own).

    The rebuild's twin of a follower's page (``services.followers.decoding.read_page``): an
    event that could not be decoded is kept as its error under its topic, and fails the page
    of every read model reading that topic, as the follower's own page would (``Decoded``);
    events that decode cost nothing more than their ``Positioned``
    (``tests/integration/test_rebuild_fast_paths.py``)."""

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


async def load_together(
    store: EventStore,
    pool: asyncpg.Pool,
    projections: Sequence[Projection],
    schemas: Sequence[str],
    keys: dict[str, list[Key]],
    head: int,
    apart: dict[str, list[str]],
    reached: Callable[[str, int], None],
    handed: Handed | None = None,
) -> None:
    """One pass over the log up to ``head`` for every read model being rebuilt, but for the
    topics each loads ``apart`` (by schema); ``reached`` hears where each got to. A read
    model whose page fails leaves the pass where it got to (``rebuild_many`` lets it go on
    alone). A read model whose events are staged is ``handed`` what the worker processes made
    of them in their place (``services.projecting.staged``).

    Each page is read and decoded once, in a thread (the next page while this one is being
    applied), and handed to every read model. Each read model applies its pages in order in a
    task of its own, on a connection of its own: one's statements run in PostgreSQL while
    another builds its rows, instead of each waiting for the last. A read model keeps at most
    ``AHEAD`` pages waiting, so memory stays bounded by the slowest. Its connection sends
    timestamps by ``services.projecting.timestamps``: the same values, in fewer steps. The
    tables whose ``keys`` were dropped are copied into (``UNKEYED``).
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
        staged = handed is not None and reader.name in handed.items
        after = 0
        async with pool.acquire() as conn, quick_timestamps(conn):
            while (page := await inbox.get()) is not None:
                try:  # an event that could not be decoded fails the page (``Shared.of``)
                    events = page.of(shared[reader.name])
                    if not staged:
                        await apply_and_move(conn, reader, events, page.upto)
                    else:
                        assert handed is not None
                        made = pieces(handed, reader.name, events, after, page.upto)
                        async for piece, upto in made:
                            await apply_and_move(conn, reader, piece, upto)
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
                    if staged:
                        assert handed is not None
                        await handed.leave(reader.name)
                    while not inbox.empty():  # the feeder may be waiting on this one
                        inbox.get_nowait()
                    return
                reached(reader.projection.name, page.upto)
                after = page.upto

    with collector_paused():
        async with asyncio.TaskGroup() as tasks:  # one failing (PostgreSQL away) stops them all
            tasks.create_task(feed())
            for reader in readers:
                tasks.create_task(follow(reader))
