"""The one append of events: ``feedbackloop_append``, a PostgreSQL function this module writes
and owns, and the arguments every caller passes it.

An append of events without a tracking record is one statement in a transaction of its own:
the append lock (``APPEND_LOCK``), the NOTIFY the followers listen for, the insert returning
the notification ids in insert order. Two drivers call it, with the same arguments
(``append_arguments``): psycopg in ``ColumnsRecorder`` (the library's saves and the bus in a
worker thread) and asyncpg in ``LoopStore`` (the bus on the event loop). An append WITH a
tracking record (an inbound partition's position) is the one other way in: the library's
statements in one transaction (``ColumnsRecorder.insert_events``), because the tracking
record's upsert and its checks are the library's and must commit with the events.

One statement rather than the library's six (BEGIN, the lock timeout, the lock, NOTIFY, the
insert, COMMIT): psycopg spends its Python on every statement it sends, and the transaction
holds the append lock for every round trip.
"""

from collections.abc import Sequence
from typing import Any

from eventsourcing.persistence import StoredEvent
from eventsourcing.postgres import PostgresRecorder
from psycopg.sql import SQL, Composed, Identifier, Literal

# What makes appends take turns, so that commit order is notification order and a follower
# never passes a position that an append still in flight will fill. The library locks the
# events table IN EXCLUSIVE MODE, and that mode also conflicts with the lock VACUUM and ANALYZE
# take: every append would wait while autovacuum works on the table, and PostgreSQL would
# cancel the autovacuum after deadlock_timeout, so it never finishes under steady writes (an
# anti-wraparound vacuum, which is never cancelled, would hold appends for its whole run).
# This transaction-level advisory lock, one per events table, serialises appends alone. Beside
# a process of an older version that still locks the table, the order holds too: an INSERT
# takes ROW EXCLUSIVE, which that table lock waits for and makes wait.
APPEND_LOCK = "pg_advisory_xact_lock(hashtext('feedbackloop_append_lock'), hashtext({events}))"

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
# The placeholders of the call for each driver: psycopg's (the arrays in binary format:
# in text format psycopg quotes and escapes every element) and asyncpg's.
PSYCOPG_PLACEHOLDERS = "%b, %b, %b, %b, %s"
ASYNCPG_PLACEHOLDERS = "$1, $2, $3, $4, $5"


def append_call(schema: str, placeholders: str) -> Composed:
    """The call of ``feedbackloop_append`` in ``schema``, with a driver's placeholders."""
    call = "SELECT * FROM {schema}.feedbackloop_append(" + placeholders + ")"
    return SQL(call).format(schema=Identifier(schema))


def append_arguments(
    stored_events: Sequence[StoredEvent], lock_timeout: str
) -> tuple[list[Any], list[int], list[str], list[bytes], str]:
    """The five arguments of ``feedbackloop_append``: one array per column, and how long the
    append may wait for the append lock (``"<seconds>s"``)."""
    return (
        [e.originator_id for e in stored_events],
        [e.originator_version for e in stored_events],
        [e.topic for e in stored_events],
        [e.state for e in stored_events],
        lock_timeout,
    )


def events_name(recorder: PostgresRecorder, events_table_name: str) -> str:
    """The events table as ``APPEND_LOCK`` names it: ``<schema>.<table>``."""
    return f"{recorder.datastore.schema}.{events_table_name}"


def ensure_append_function(
    recorder: PostgresRecorder, events_table_name: str, channel_name: str
) -> None:
    """``feedbackloop_append``, as this version writes it: replaced only when its body differs
    (every process opens the store; a replacement writes the catalogue and makes every session
    plan its calls again). Processes that start together take turns (replacing a function at
    the same moment fails one of them)."""
    datastore = recorder.datastore
    body = SQL(APPEND_BODY).format(
        schema=Identifier(datastore.schema),
        table=Identifier(events_table_name),
        channel=Literal(channel_name),
        events=Literal(events_name(recorder, events_table_name)),
    )
    with datastore.transaction(commit=True) as curs:
        text = body.as_string(curs)
        curs.execute(APPEND_BODY_NOW, (datastore.schema,))
        if (found := curs.fetchone()) is not None and found["prosrc"] == text:
            return
        curs.execute("SELECT pg_advisory_xact_lock(hashtext('feedbackloop_append'))")
        curs.execute(SQL(APPEND_FUNCTION).format(schema=Identifier(datastore.schema), body=text))
