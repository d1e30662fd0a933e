"""The bus's store on the event loop, through asyncpg: the fast twin of asking the library's
psycopg recorder in a worker thread which aggregates exist (``existing``) and appending a
batch without a tracking record (``ColumnsRecorder.insert_events``).

On a busy process a batch handed from the event loop to a thread and back waits for a thread
to start and then for the loop to let go of the interpreter, often longer than deciding the
batch takes; here the waits for PostgreSQL are the loop's own. The append is the store's one
append (``feedbackloop_append``, ``services.store.appending``: the same arguments, lock and
NOTIFY), and a key taken meanwhile fails it with the library's ``IntegrityError``, so the bus
redoes the batch as it does any conflict. The plain path is the recorder in a thread, which
the bus still takes when this one fails; ``tests/integration/test_store_and_bus.py`` holds
the two to the same positions and the same conflicts.
"""

from collections.abc import Collection, Sequence
from uuid import UUID

import asyncpg
from eventsourcing.persistence import IntegrityError, StoredEvent

from services.store.appending import ASYNCPG_PLACEHOLDERS, append_arguments, append_call
from services.store.columns_recorder import ColumnsRecorder
from services.store.event_store import EventStore
from services.store.existing import EXISTING_ON_LOOP


async def nothing_to_reset(conn: asyncpg.Connection) -> None:
    """A connection given back needs no reset query: its two statements leave nothing in the
    session (the append's lock and ``lock_timeout`` are its transaction's). asyncpg still rolls
    back a transaction left open and drops listeners before it calls this; what is skipped is
    its reset query (advisory locks, cursors, settings), a round trip paid by every command
    (D303)."""


class LoopStore:
    """Its connections are its own (``open``): the writes of a process never wait for a
    connection behind its reads (a read with ``minPosition`` holds one while it waits)."""

    @classmethod
    async def open(cls, database_url: str, store: EventStore, size: int = 2) -> "LoopStore":
        # Two: a batch's lookup while the batch before it appends. None kept open: a process
        # that sends no command (a projector, the relay) never holds one.
        pool = await asyncpg.create_pool(
            database_url, min_size=0, max_size=size, reset=nothing_to_reset
        )
        return cls(pool, store)

    def __init__(self, pool: asyncpg.Pool, store: EventStore) -> None:
        recorder = store.recorder
        assert isinstance(recorder, ColumnsRecorder), "open_store sets the recorder"
        self._pool = pool
        self._append = append_call(recorder.datastore.schema, ASYNCPG_PLACEHOLDERS).as_string(None)
        self._lock_timeout = f"{recorder.datastore.lock_timeout}s"

    async def existing(self, ids: Collection[UUID]) -> set[UUID]:
        """Which of these aggregates have events (``existing``), in one query."""
        if not ids:
            return set()
        return {id for (id,) in await self._pool.fetch(EXISTING_ON_LOOP, list(set(ids)))}

    async def append(self, stored_events: Sequence[StoredEvent]) -> list[int]:
        """Append the events in one transaction; answers their positions, in order."""
        try:
            rows = await self._pool.fetch(
                self._append, *append_arguments(stored_events, self._lock_timeout)
            )
        except asyncpg.UniqueViolationError as error:  # a version taken meanwhile
            raise IntegrityError(error) from error
        return [id for (id,) in rows]

    async def close(self) -> None:
        await self._pool.close()
