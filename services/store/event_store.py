"""The event store: the eventsourcing library on PostgreSQL, source of truth and outbox.

One ``Application`` holds every aggregate and one notification log. It uses the library's
process recorder so that new events and a tracking record (an inbound Kafka offset) commit
in one transaction.
"""

import os
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit
from uuid import UUID

import asyncpg
import orjson
import psycopg
from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.persistence import (
    IntegrityError,
    InterfaceError,
    JSONTranscoder,
    Notification,
    OperationalError,
    ProcessRecorder,
    ProgrammingError,
    StoredEvent,
    Transcoder,
    Transcoding,
)
from eventsourcing.postgres import PostgresProcessRecorder
from eventsourcing.utils import retry
from psycopg import Cursor
from psycopg.pq import TransactionStatus
from psycopg.rows import DictRow, tuple_row
from psycopg.sql import SQL, Identifier, Literal
from pydantic import BaseModel

from contracts.errors import NotFound
from contracts.neighbours import RunCompleted
from contracts.scalars import STORED
from services.store.making import made

STORE_NAME = "FeedbackLoop"
EVENTS_TABLE = "feedbackloop_events"  # the library's naming: lower(name) + "_events"


class StoreMisconfigured(RuntimeError):
    pass


class ContractAsJSON(Transcoding):
    """A contract model carried whole in an event (a received RunCompleted), stored as its
    JSON by its wire names and read back as the model."""

    def __init__(self, model: type[BaseModel]) -> None:
        self.model, self.type, self.name = model, model, model.__name__

    def encode(self, obj: Any) -> Any:
        return obj.model_dump(mode="json", by_alias=True)

    def decode(self, data: Any) -> Any:
        """Read back as it was accepted: checks added at the door since refuse nothing stored
        (``contracts.scalars.STORED``)."""
        return self.model.model_validate(data, context=STORED)


INT64 = range(-(2**63), 2**63)  # orjson writes the ints of this range as json does
SCALARS = frozenset({str, bool, type(None), datetime})  # written alike by both, exact types


def plain_json(value: Any) -> bool:
    """Whether orjson writes this value byte for byte as the library's ``json`` encoder does:
    strings, bools, None, 64-bit ints, aware or naive datetimes (by the transcoding, as the
    library does), and lists and string-keyed dicts of those. Not floats (the two spell some
    differently), tuples, UUIDs, enums or subclasses (orjson has ways of its own for them)."""
    kind = type(value)
    if kind in SCALARS:
        return True
    if kind is int:
        return value in INT64
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or (type(item) not in SCALARS and not plain_json(item)):
                return False
        return True
    if kind is list:
        return all(type(item) in SCALARS or plain_json(item) for item in value)
    return False


class FastJSONTranscoder(JSONTranscoder):
    """The library's JSON transcoder, writing an event of plain values with orjson.

    Issue 12: the library's ``json`` encoder (its ``default`` called for each datetime) took
    about 20 µs an event, a tenth of deciding a command under Kafka ingest; orjson takes a
    few. Only values ``plain_json`` admits go that way, where both write the same bytes (a
    test compares them); anything else stays the library's.

    Reading is orjson's too, with the library's own object hook applied to every object
    afterwards, innermost first and in document order, as ``json`` calls it while it parses:
    the same ``_type_``/``_data_`` transcodings, the same errors. The library's ``json``
    decoder took about 12 µs an event, a sixth of the relay's CPU (issue 12, figure 5), and
    every reader of the log and every load of an aggregate pays it. Where the two parsers
    may differ, the library's decodes: whatever orjson refuses (NaN, lone surrogates, numbers
    past a double …) and any document holding a float (orjson also reads an integer past
    64 bits as one; and a float's last digit is left to ``float()`` alone)."""

    def encode(self, obj: Any) -> bytes:
        if plain_json(obj):
            try:
                return orjson.dumps(
                    obj, default=self._encode_obj, option=orjson.OPT_PASSTHROUGH_DATETIME
                )
            except orjson.JSONEncodeError:
                pass  # a lone surrogate, say: the library's encoder says what is wrong
        return super().encode(obj)

    def decode(self, data: bytes) -> Any:
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            return super().decode(data)  # refused: the library's reading, or its error
        kind = type(value)
        if kind is dict or kind is list:
            try:
                return self._hooked(value)
            except _HasFloat:
                return super().decode(data)
        if kind is float:
            return super().decode(data)
        return value

    def _hooked(self, value: Any) -> Any:
        """``value`` (a dict or list orjson read) with the library's hook applied to every
        object in it, innermost first, as ``json`` applies it while parsing."""
        is_dict = type(value) is dict
        # Each item put back in its own place: a dict keeps its size, a list its length.
        for place, item in value.items() if is_dict else enumerate(value):
            kind = type(item)
            if kind is dict or kind is list:
                value[place] = self._hooked(item)
            elif kind is float:
                raise _HasFloat
        # The hook returns an object of any other size as it is: spare it the call.
        return self._decode_obj(value) if is_dict and len(value) == 2 else value


class _HasFloat(Exception):
    """A float in what orjson read: the library's decoder reads the document instead."""


# Contract models that events carry as typed fields.
CONTRACTS_IN_EVENTS: tuple[type[BaseModel], ...] = (RunCompleted,)


class EventStore(Application[UUID]):
    name = STORE_NAME

    def construct_transcoder(self) -> Transcoder:
        transcoder = FastJSONTranscoder()
        self.register_transcodings(transcoder)
        return transcoder

    def register_transcodings(self, transcoder: JSONTranscoder) -> None:
        super().register_transcodings(transcoder)
        for model in CONTRACTS_IN_EVENTS:
            transcoder.register(ContractAsJSON(model))

    def construct_recorder(self) -> ProcessRecorder:
        recorder: ProcessRecorder = self.factory.process_recorder()
        return recorder

    @property
    def process_recorder(self) -> ProcessRecorder:
        recorder = self.recorder
        assert isinstance(recorder, ProcessRecorder)
        return recorder


class ColumnsRecorder(PostgresProcessRecorder):
    """The library's process recorder, inserting a transaction's events as four arrays (one
    per column) instead of one array of a composite type.

    Issue 12 profile: psycopg dumps a composite array in Python, field by field, and that
    took a quarter of the command bus's thread under Kafka ingest; arrays of uuid, bigint,
    text and bytea are dumped by its compiled code. Everything else is the library's, but for
    the lock that makes commit order the notification order (``APPEND_LOCK``, in place of its
    table lock): the NOTIFY, the RETURNING of the notification ids in insert order, and the
    tracking record in the same transaction.

    The arrays go in PostgreSQL's binary format (``%b``): in text format psycopg quotes and
    escapes every element (a bytea's hex, then the array's quoting, by regular expression),
    about 40 µs an event; in binary about 9 (issue 12, 1,000-event inserts).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.append_statement = SQL(
            "SELECT * FROM {schema}.feedbackloop_append(%b, %b, %b, %b, %s)"
        ).format(schema=Identifier(self.datastore.schema))
        self.events_name = f"{self.datastore.schema}.{self.events_table_name}"
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

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)  # as the library's
    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        """The library's, its COMMIT sent in the same round trip as the inserts.

        The library commits in a second round trip, once it has read the inserted ids, and
        all that time the transaction holds the append lock (``_lock_table``). In an API
        worker, whose event loop keeps the interpreter busy, the committing thread may wait
        a switch interval (5 ms) for it after each round trip. Issue 12: sampled under HTTP
        load, a backend sat idle in its transaction, holding the lock, in about half the
        samples, and every other writer queued behind it. Sent together, the lock is held
        only while PostgreSQL works. A failed insert (a version or tracking conflict) skips
        the rest of the round trip, COMMIT included, and is rolled back.

        Events without a tracking record (every HTTP command, and the library's own saves)
        take ``feedbackloop_append`` instead (``APPEND_BODY``): one statement in a
        transaction of its own, doing the same. Issue 12: psycopg's Python spends about
        100 µs on each statement it sends, and the library's transaction is six (BEGIN, the
        lock timeout, the lock, NOTIFY, the insert, COMMIT): 0.9–1.7 ms of CPU an append of
        ten events, against 0.3–0.4 ms so. A tracking record keeps the library's statements
        for it (its single-row upsert and the checks around it)."""
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
        columns = (
            [e.originator_id for e in stored_events],
            [e.originator_version for e in stored_events],
            [e.topic for e in stored_events],
            [e.state for e in stored_events],
            f"{self.datastore.lock_timeout}s",
        )
        with (
            self.datastore.get_connection() as conn,  # autocommit: the statement commits
            conn.cursor(row_factory=tuple_row) as curs,
        ):
            curs.execute(self.append_statement, columns, prepare=True)
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
        """The library's, reading the RETURNING rows as tuples: a dict for each returned id
        was a twentieth of the command bus's time under Kafka ingest (issue 12). The cursor
        is the transaction's, so its row factory is put back for what follows."""
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


class LoopStore:
    """What the command bus asks of PostgreSQL on the event loop, through asyncpg: which
    aggregates exist, and an append of events without a tracking record.

    Issue 12: with the library's psycopg in a worker thread, an API worker's batch passed
    from the event loop to a thread and back twice (deciding, appending). On two busy cores a
    thread waited 1.1–1.8 ms to start and then for the event loop to let go of the
    interpreter; deciding about 0.7 ms of CPU took 2.8–4.5 ms. Here the waits for PostgreSQL
    are the loop's own. The append is the one ``ColumnsRecorder`` makes (the same function,
    the same append lock and NOTIFY) and a key taken meanwhile fails it with the library's
    ``IntegrityError``, so the bus redoes the batch as it does any conflict.

    Its connections are its own (``open``): the writes of a process never wait for a
    connection behind its reads (a read with ``minPosition`` holds one while it waits)."""

    @classmethod
    async def open(cls, database_url: str, store: EventStore, size: int = 2) -> "LoopStore":
        # Two: a batch's lookup while the batch before it appends. None kept open: a process
        # that sends no command (a projector, the relay) never holds one.
        return cls(await asyncpg.create_pool(database_url, min_size=0, max_size=size), store)

    def __init__(self, pool: asyncpg.Pool, store: EventStore) -> None:
        recorder = store.recorder
        assert isinstance(recorder, ColumnsRecorder), "open_store sets the recorder"
        schema = Identifier(recorder.datastore.schema)
        self._pool = pool
        self._append = (
            SQL("SELECT * FROM {schema}.feedbackloop_append($1, $2, $3, $4, $5)")
            .format(schema=schema)
            .as_string(None)
        )
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
                self._append,
                [e.originator_id for e in stored_events],
                [e.originator_version for e in stored_events],
                [e.topic for e in stored_events],
                [e.state for e in stored_events],
                self._lock_timeout,
            )
        except asyncpg.UniqueViolationError as error:  # a version taken meanwhile
            raise IntegrityError(error) from error
        return [id for (id,) in rows]

    async def close(self) -> None:
        await self._pool.close()


def postgres_env(database_url: str) -> dict[str, str]:
    """The library's settings for a ``postgresql://`` URL (a ``?host=`` socket dir is allowed)."""
    url = urlsplit(database_url)
    if url.scheme not in {"postgres", "postgresql"}:
        raise StoreMisconfigured(f"DATABASE_URL must be postgresql://…, not {url.scheme}://")
    query = parse_qs(url.query)
    host = query.get("host", [url.hostname or "localhost"])[0]
    return {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_HOST": host,
        "POSTGRES_PORT": str(url.port or query.get("port", ["5432"])[0]),
        "POSTGRES_USER": unquote(url.username or "postgres"),
        "POSTGRES_PASSWORD": unquote(url.password or ""),
        "POSTGRES_DBNAME": (url.path or "/postgres").lstrip("/") or "postgres",
        "POSTGRES_POOL_SIZE": "4",
        "POSTGRES_MAX_OVERFLOW": "8",
        # ARCHITECTURE: with DB functions on, a reader tailing the log under concurrent
        # writers misses events (the insert function skips the table lock). Keep it off.
        "POSTGRES_ENABLE_DB_FUNCTIONS": "n",
        "PROCESS_RECORDER_TOPIC": f"{__name__}:{ColumnsRecorder.__name__}",
    }


def open_store(database_url: str, **overrides: Any) -> EventStore:
    """Open (and on first use create) the event store, refusing DB functions."""
    from_env = os.environ.get("POSTGRES_ENABLE_DB_FUNCTIONS", "").strip().lower()
    if from_env in {"y", "yes", "t", "true", "on", "1"}:
        raise StoreMisconfigured(
            "POSTGRES_ENABLE_DB_FUNCTIONS is set: refused, because a reader tailing the "
            "notification log under concurrent writers would miss events"
        )
    store = EventStore(env={**postgres_env(database_url), **overrides})
    datastore = getattr(store.recorder, "datastore", None)
    if datastore is None or datastore.enable_db_functions:
        raise StoreMisconfigured("the event store must run on PostgreSQL without DB functions")
    if store.mapper.compressor is not None or store.mapper.cipher is not None:
        # The owners' table reads the tenant from the first event's JSON (ensure_tenants_table).
        raise StoreMisconfigured("the event store's events must be stored as plain JSON")
    ensure_tenants_table(store)
    ensure_append_function(store)
    return store


# The library's own page query, with rows as tuples: building a dict per row was a tenth of
# a rebuild's time (issue 12 item 6).
READ_PAGE = (
    "SELECT notification_id, originator_id, originator_version, topic, state "
    f"FROM {EVENTS_TABLE} WHERE notification_id > %s AND notification_id <= %s "
    "AND topic = ANY(%s) ORDER BY notification_id LIMIT %s"
)


def read_log(
    store: EventStore, after: int, limit: int, topics: list[str], upto: int | None = None
) -> tuple[int, list[Notification]]:
    """The next notifications of the given topics after ``after``, and the position they
    bring a reader to.

    Events commit in notification order (appends take turns, ``APPEND_LOCK``), so
    everything up to the head read first was visible: when the page is not full, the reader
    may move to that head even if none of its topics lay in between. A reader that read the
    head once already (a rebuild) passes a position up to it as ``upto``: the page stops
    there, without reading the head again.
    """
    recorder = store.recorder
    head = upto if upto is not None else recorder.max_notification_id() or 0
    if head <= after:
        return after, []
    datastore = recorder.datastore  # type: ignore[attr-defined]  # PostgreSQL's
    with datastore.get_connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
        # Binary results: the state's bytes as stored, not hex to be parsed; uuids from their
        # sixteen bytes (issue 12: about 9 -> 5 µs an event of a rebuild's reading).
        curs.execute(READ_PAGE, (after, head, topics, limit), prepare=True, binary=True)
        notifications = [
            made(
                Notification,
                {"originator_id": aggregate, "originator_version": version, "topic": topic,
                 "state": bytes(state), "id": id}
            )
            for id, aggregate, version, topic, state in curs.fetchall()
        ]  # fmt: skip
    upto = notifications[-1].id if len(notifications) == limit else head
    return upto, notifications


def existing_query(ids: str) -> str:
    """Which of the ids in the array parameter ``ids`` (``%b`` for psycopg, ``$1`` for
    asyncpg) have events: one probe of the primary key per id.

    Issue 12: ``originator_id = ANY(...)`` was planned as a (parallel) scan of the whole
    table while the store had no statistics yet (a fresh store, or one growing faster than
    autovacuum analyses it): 44 ms for 750 ids at 100,000 events, growing with the log, and
    one reason the Kafka figure fell as its run grew. The lateral ``LIMIT 1`` leaves the
    planner one way, an index probe per id (6 ms there, with or without statistics)."""
    return (
        f"SELECT wanted.id FROM unnest({ids}::uuid[]) AS wanted(id) CROSS JOIN LATERAL "
        f"(SELECT FROM {EVENTS_TABLE} WHERE originator_id = wanted.id LIMIT 1) AS found"
    )


EXISTING = existing_query("%b")
EXISTING_ON_LOOP = existing_query("$1")  # asyncpg's


def existing(store: EventStore, ids: Collection[UUID]) -> set[UUID]:
    """Which of these aggregates have events, in one query."""
    if not ids:
        return set()
    datastore = store.recorder.datastore  # type: ignore[attr-defined]  # PostgreSQL's
    with datastore.get_connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
        # Binary (%b): a text array of hundreds of ids is quoted element by element.
        curs.execute(EXISTING, [list(set(ids))])
        return {id for (id,) in curs.fetchall()}


# Issue 8 item 6: who owns each aggregate, in a table as small as the number of aggregates,
# filled by the database in the very transaction that appends an aggregate's first event, so
# it can never disagree with the store. Every owned aggregate is created naming its tenant.
TENANTS_TABLE = "aggregate_tenants"
TENANTS_DDL = f"""
CREATE TABLE IF NOT EXISTS {TENANTS_TABLE} (
    aggregate_id uuid NOT NULL,
    tenant_id text NOT NULL,
    -- Both in the key: a probe by (id, another tenant) finds no entry, exactly as a probe
    -- by an id that does not exist; with the id alone it would find one and then compare.
    PRIMARY KEY (aggregate_id, tenant_id)
);
"""
TENANTS_FUNCTION = f"""
-- Issue 12: once per INSERT statement over its new rows (a transition table), not once per
-- row. Per row, the trigger took about a third of an append of 1,000 events.
CREATE OR REPLACE FUNCTION feedbackloop_record_tenant() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {TENANTS_TABLE}
        SELECT originator_id, tenant FROM (
            SELECT originator_id, convert_from(state, 'UTF8')::json ->> 'tenant_id' AS tenant
            FROM appended WHERE originator_version = 1
        ) AS firsts
        WHERE tenant IS NOT NULL
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
"""
TENANTS_TRIGGER = f"""
DROP TRIGGER IF EXISTS feedbackloop_record_tenant ON {EVENTS_TABLE};
CREATE TRIGGER feedbackloop_record_tenant AFTER INSERT ON {EVENTS_TABLE}
REFERENCING NEW TABLE AS appended
FOR EACH STATEMENT EXECUTE FUNCTION feedbackloop_record_tenant();
INSERT INTO {TENANTS_TABLE}
    SELECT originator_id, convert_from(state, 'UTF8')::json ->> 'tenant_id'
    FROM {EVENTS_TABLE}
    WHERE originator_version = 1 AND convert_from(state, 'UTF8')::json ->> 'tenant_id' IS NOT NULL
ON CONFLICT DO NOTHING;
"""
# pg_trigger.tgtype bit 0 is set for a row-level trigger: the one before issue 12 is replaced.
STATEMENT_TRIGGER = (
    "SELECT 1 FROM pg_trigger WHERE tgname = 'feedbackloop_record_tenant' AND tgtype & 1 = 0"
)


# What makes appends take turns, so that commit order is notification order and a follower
# never passes a position that an append still in flight will fill. The library locks the
# events table IN EXCLUSIVE MODE, and that mode also conflicts with the lock VACUUM and ANALYZE
# take: while autovacuum worked on the table, every append waited, and after deadlock_timeout
# (1 s) PostgreSQL cancelled the autovacuum, which then never finished under steady writes
# (issue 12: the HTTP figure's one-second stalls, its p99 misses; an anti-wraparound vacuum,
# which is never cancelled, would hold appends for its whole run). This transaction-level
# advisory lock, one per events table, serialises appends alone. Beside a process of an older
# version that still locks the table, the order holds too: an INSERT takes ROW EXCLUSIVE,
# which that table lock waits for and makes wait, so their inserts never interleave either.
APPEND_LOCK = "pg_advisory_xact_lock(hashtext('feedbackloop_append_lock'), hashtext({events}))"

# Issue 12: an append of events without a tracking record in one statement (see
# ``ColumnsRecorder.insert_events``), doing what the library's transaction does: the append
# lock (``APPEND_LOCK``), the NOTIFY its followers listen for, the insert returning the
# notification ids in insert order. The statement's own transaction commits it.
APPEND_BODY = f"""
BEGIN
    PERFORM set_config('lock_timeout', lock_timeout, true);
    PERFORM {APPEND_LOCK};
    PERFORM pg_notify({{channel}}, '');
    RETURN QUERY INSERT INTO {{schema}}.{{table}} (originator_id, originator_version, topic, state)
        SELECT * FROM unnest(ids, versions, topics, states) RETURNING notification_id;
END
"""
APPEND_FUNCTION = """
CREATE OR REPLACE FUNCTION {schema}.feedbackloop_append(
    ids uuid[], versions bigint[], topics text[], states bytea[], lock_timeout text
) RETURNS SETOF bigint LANGUAGE plpgsql AS {body}
"""
APPEND_BODY_NOW = (
    "SELECT prosrc FROM pg_proc WHERE proname = 'feedbackloop_append' "
    "AND pronamespace = %s::regnamespace"
)


def ensure_append_function(store: EventStore) -> None:
    """``feedbackloop_append``, as this version writes it: replaced only when its body differs
    (every process opens the store; a replacement writes the catalogue and makes every session
    plan its calls again). Processes that start together take turns (replacing a function at
    the same moment fails one of them)."""
    recorder = store.recorder
    assert isinstance(recorder, ColumnsRecorder), "open_store sets the recorder"
    datastore = recorder.datastore
    body = SQL(APPEND_BODY).format(
        schema=Identifier(datastore.schema),
        table=Identifier(recorder.events_table_name),
        channel=Literal(recorder.channel_name),
        events=Literal(recorder.events_name),
    )
    with datastore.transaction(commit=True) as curs:
        text = body.as_string(curs)
        curs.execute(APPEND_BODY_NOW, (datastore.schema,))
        if (found := curs.fetchone()) is not None and found["prosrc"] == text:
            return
        curs.execute("SELECT pg_advisory_xact_lock(hashtext('feedbackloop_append'))")
        curs.execute(SQL(APPEND_FUNCTION).format(schema=Identifier(datastore.schema), body=text))


def ensure_tenants_table(store: EventStore) -> None:
    """The owners' table and the trigger that fills it; the first time, the owners of the
    aggregates already stored too (the trigger is created first, and waits for appends in
    flight, so none is missed). A row-level trigger of an older version is replaced."""
    datastore = store.recorder.datastore  # type: ignore[attr-defined]  # PostgreSQL's
    with datastore.transaction(commit=True) as curs:
        curs.execute("SELECT pg_advisory_xact_lock(hashtext('aggregate_tenants'))")
        curs.execute(TENANTS_DDL)
        curs.execute(STATEMENT_TRIGGER)
        if curs.fetchone() is None:  # the function changes with the trigger, in one transaction
            curs.execute(TENANTS_FUNCTION)
            curs.execute(TENANTS_TRIGGER)


def owned(store: EventStore, tenant_id: str, aggregate_id: UUID) -> bool:
    """Whether the aggregate exists and is the tenant's: one index probe by (id, tenant).

    Issue 8 item 6: loading the whole aggregate and then comparing its tenant made another
    tenant's id measurably slower to refuse than an id that does not exist, which told
    whoever probed that it exists. Here both find no row through the same probe of a small
    table; only the caller's own aggregate is then loaded."""
    datastore = getattr(store.recorder, "datastore", None)
    if datastore is None:  # the in-memory store of the unit tests: no timing to hide
        try:
            return getattr(store.repository.get(aggregate_id), "tenant_id", None) == tenant_id
        except AggregateNotFoundError:
            return False
    with datastore.get_connection() as conn, conn.cursor() as curs:
        curs.execute(
            f"SELECT 1 FROM {TENANTS_TABLE} WHERE aggregate_id = %s AND tenant_id = %s",
            [aggregate_id, tenant_id],
        )
        return curs.fetchone() is not None


def load_owned(store: EventStore, tenant_id: str, aggregate_id: UUID, what: str) -> Any:
    """An aggregate of the caller's tenant; another tenant's is as absent as a missing one,
    and takes the same path to say so (``owned``)."""
    if not owned(store, tenant_id, aggregate_id):
        raise NotFound(f"no {what} {aggregate_id}", id=str(aggregate_id))
    aggregate: Any = store.repository.get(aggregate_id)
    return aggregate
