"""The readers of the log a runtime runs: each on a follower of its own, under the runtime's
supervisor, the read models among them."""

import asyncio
import logging

import asyncpg

from services.followers.follower import Follower
from services.followers.reader import Reader
from services.followers.status import ReaderStatus
from services.followers.supervisor import Supervisor
from services.processes.contexts import read_models
from services.projecting.live import ProjectionReader
from services.store.event_store import EventStore

log = logging.getLogger("feedbackloop")


class LogReaders:
    """The Runtime's part that runs readers of the log (``services.processes.bootstrap``)."""

    store: EventStore
    pool: asyncpg.Pool
    stop: asyncio.Event
    supervisor: Supervisor
    readers: dict[str, ReaderStatus]

    def follow(self, reader: Reader) -> Follower:
        """Run a reader of the log on the follower, supervised."""
        follower = Follower(self.store, self.pool, reader)
        self.readers[reader.name] = follower.status
        self.supervisor.start(reader.name, lambda: follower.run(self.stop))
        return follower

    def start_projections(self, only: list[str] | None = None) -> None:
        for projection in read_models():
            if only and projection.name not in only:
                continue
            self.follow(ProjectionReader(projection))
            log.info("projection %s: running", projection.name)
