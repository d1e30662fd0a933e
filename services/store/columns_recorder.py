"""The store's recorder: the library's PostgreSQL process recorder, appending through
``feedbackloop_append`` (``services.store.appending``) and inserting a transaction's events as
four arrays, one per column.

psycopg dumps an array of a composite type in Python, field by field; arrays of uuid, bigint,
text and bytea are dumped by its compiled code, and in PostgreSQL's binary format (``%b``)
nothing is quoted or escaped. Everything else is the library's, but for the lock that makes
commit order the notification order (``APPEND_LOCK``, in place of its table lock).
"""

from collections.abc import Sequence
from typing import Any

import psycopg
from eventsourcing.persistence import (
    InterfaceError,
    OperationalError,
    ProgrammingError,
    StoredEvent,
)
from eventsourcing.postgres import PostgresProcessRecorder
from psycopg import Cursor
from psycopg.pq import TransactionStatus
from psycopg.rows import DictRow, tuple_row
from psycopg.sql import SQL, Identifier, Literal
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_random

from services.store.appending import (
    APPEND_LOCK,
    PSYCOPG_PLACEHOLDERS,
    append_arguments,
    append_call,
    events_name,
)

# An insert that lost its connection, or met a server going away, tried again nine times
# more, as the library tries its own (ten attempts in all, 0.2 s apart with a little jitter).
reconnecting = retry(
    retry=retry_if_exception_type((InterfaceError, OperationalError)),
    stop=stop_after_attempt(9),
    wait=wait_random(0.19, 0.21),
    reraise=True,
)


class ColumnsRecorder(PostgresProcessRecorder):
    """The library's process recorder, appending through ``feedbackloop_append``, or, with a
    tracking record, through the library's statements sent in one round trip."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.append_statement = append_call(self.datastore.schema, PSYCOPG_PLACEHOLDERS)
        self.events_name = events_name(self, self.events_table_name)
        # What the library's ``_lock_table`` runs to make appends take turns: its lock
        # timeout, then ``APPEND_LOCK`` in place of its table lock.
        self.lock_table_statements = [
            SQL("SET LOCAL lock_timeout = '{0}s'").format(self.datastore.lock_timeout),
            SQL("SELECT " + APPEND_LOCK).format(events=Literal(self.events_name)),
        ]
        self.insert_events_statement = SQL(
            "INSERT INTO {schema}.{table} (originator_id, originator_version, topic, state) "
            "SELECT * FROM unnest(%b::uuid[], %b::bigint[], %b::text[], %b::bytea[]) "
            "RETURNING notification_id"
        ).format(
            schema=Identifier(self.datastore.schema),
            table=Identifier(self.events_table_name),
        )

    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        """Append the events, and the tracking record if any, in one transaction; tried
        again after a lost connection (``reconnecting``). The first try is made outside
        tenacity: its machinery costs more than an append's own Python, on every append."""
        try:
            return self._insert_events_once(stored_events, **kwargs)
        except (InterfaceError, OperationalError):
            return reconnecting(self._insert_events_once)(stored_events, **kwargs)

    def _insert_events_once(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        """Events without a tracking record (every HTTP command, and the library's own saves)
        take ``feedbackloop_append``: one statement in a transaction of its own.

        With a tracking record, the library's statements for it (its single-row upsert and
        the checks around it) and the events' insert, in one transaction whose COMMIT is sent
        in the same round trip as the inserts: the transaction holds the append lock
        (``_lock_table``) until it commits, and a committing thread of a busy process may wait
        for the interpreter after each round trip while every other writer queues behind it.
        Sent together, the lock is held only while PostgreSQL works. A failed insert (a version
        or tracking conflict) skips the rest of the round trip, COMMIT included, and is rolled
        back."""
        if stored_events and kwargs.get("tracking") is None:
            return self._append(stored_events)
        ids: Sequence[int] | None = None
        error: Exception | None = None
        with self.datastore.get_connection() as conn:
            with conn.pipeline() as pipeline, conn.cursor() as curs, conn.cursor() as inserted:
                try:
                    curs.execute("BEGIN")
                    self._insert_events(curs, stored_events, **kwargs)  # the tracking record
                    if stored_events:
                        self._insert_stored_events(inserted, stored_events, **kwargs)
                    curs.execute("COMMIT")
                    pipeline.sync()
                    if stored_events:
                        ids = self._fetch_ids_after_insert_events(inserted, stored_events)
                except Exception as failed:
                    error = failed  # raised once out of the pipeline, as the library does
            if error is not None:
                if conn.info.transaction_status == TransactionStatus.INERROR:
                    conn.execute("ROLLBACK")
                raise error
        return ids

    def _append(self, stored_events: Sequence[StoredEvent]) -> list[int]:
        arguments = append_arguments(stored_events, f"{self.datastore.lock_timeout}s")
        with (
            self.datastore.get_connection() as conn,  # autocommit: the statement commits
            conn.cursor(row_factory=tuple_row) as curs,
        ):
            curs.execute(self.append_statement, arguments, prepare=True)
            return [id for (id,) in curs.fetchall()]

    def _insert_stored_events(
        self, curs: Cursor[DictRow], stored_events: Sequence[StoredEvent], **_: Any
    ) -> None:
        self._lock_table(curs)
        self._notify_channel(curs)
        curs.execute(
            self.insert_events_statement,
            (
                [e.originator_id for e in stored_events],
                [e.originator_version for e in stored_events],
                [e.topic for e in stored_events],
                [e.state for e in stored_events],
            ),
        )

    def _fetch_ids_after_insert_events(
        self, curs: Cursor[DictRow], stored_events: Sequence[StoredEvent], **_: Any
    ) -> Sequence[int] | None:
        """The library's, reading the RETURNING rows as tuples rather than a dict for each
        id. The cursor is the transaction's, so its row factory is put back for what follows."""
        assert (curs.statusmessage or "").startswith("INSERT"), curs.statusmessage
        dict_rows = curs.row_factory
        curs.row_factory = tuple_row  # type: ignore[assignment]  # for this fetch only
        try:
            return [id for (id,) in curs.fetchall()]  # type: ignore[misc]
        except psycopg.ProgrammingError as error:
            message = f"Couldn't get all notification IDs (expected {len(stored_events)})"
            raise ProgrammingError(message) from error
        finally:
            curs.row_factory = dict_rows
