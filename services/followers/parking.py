"""The one place where what a reader cannot get through is set aside: ``parked``.

Two kinds of thing are parked, each by its reader:

- a **log event** a reader of the log kept failing on (``reader`` the reader's name,
  ``position`` its place in the log). Later events of the same aggregate are parked behind it
  (``behind``), so one aggregate's order is never broken; other aggregates flow on;
- an **inbound message** (``reader`` = ``INBOUND``) that could be neither applied nor written
  to its dead-letter topic: its trace (coordinates, size, hash, the first KiB, headers), never
  an unbounded copy of it; ``position`` numbers it here, and one redelivered is parked once.

``feedbackloop parked list|show|retry|skip`` operates both (``services.followers.parked``);
``/readyz`` and the metrics count them by reader as incidents (``parked_by_reader``).
"""

from uuid import UUID

import asyncpg
from eventsourcing.persistence import Notification

from services.followers.reader import Connection

INBOUND = "inbound"  # the reader inbound messages are parked by

DDL = """
CREATE SEQUENCE IF NOT EXISTS parked_message_numbers;
CREATE TABLE IF NOT EXISTS parked (
    reader text NOT NULL,
    position bigint NOT NULL,
    topic text NOT NULL,  -- the event's topic, or the Kafka topic
    error text NOT NULL,  -- why it is parked
    attempts int NOT NULL DEFAULT 0,
    released boolean NOT NULL DEFAULT false,
    parked_at timestamptz NOT NULL DEFAULT now(),
    -- a log event's
    originator_id uuid,
    originator_version bigint,
    behind bigint,  -- the position of the parked event of its aggregate it waits behind
    -- an inbound message's trace
    partition integer,
    "offset" bigint,
    key bytea,
    code text,  -- the refusal's code (contracts.errors)
    field text,
    payload_size integer,
    sha256 text,
    head bytea,
    headers jsonb,
    PRIMARY KEY (reader, position),
    UNIQUE (topic, partition, "offset", sha256)
);
CREATE INDEX IF NOT EXISTS parked_aggregate ON parked (reader, originator_id);
"""

# What the two tables before ``parked`` held is carried into it once, at start, and the old
# table dropped in the same statement: a reader's position is already past what it parked,
# so a parked event left behind would never be applied (or published) again.
CARRY_OVER = """
DO $$
BEGIN
  IF to_regclass('parked_events') IS NOT NULL THEN
    INSERT INTO parked (reader, position, topic, error, attempts, released, parked_at,
                        originator_id, originator_version, behind)
    SELECT reader, position, topic, error, attempts, released, parked_at,
           originator_id, originator_version, behind
    FROM parked_events ON CONFLICT DO NOTHING;
    DROP TABLE parked_events;
  END IF;
  IF to_regclass('inbound_parked') IS NOT NULL THEN
    INSERT INTO parked (reader, position, topic, error, code, field, parked_at, partition,
                        "offset", key, payload_size, sha256, head, headers)
    SELECT 'inbound', nextval('parked_message_numbers'), topic, reason, error, field,
           parked_at, partition, "offset", key, payload_size, sha256, head, headers
    FROM inbound_parked ORDER BY id ON CONFLICT DO NOTHING;
    DROP TABLE inbound_parked;
  END IF;
END $$;
"""

REBUILDS = "%\\_\\_rebuild"  # the readers of a rebuild under way: not the instance's


def reason_of(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:2000]


async def parked_aggregates(conn: Connection, reader: str) -> tuple[set[UUID], int]:
    """The aggregates the reader has parked events of, and how many events that is."""
    rows = await conn.fetch(
        "SELECT originator_id, count(*) FROM parked WHERE reader = $1 GROUP BY originator_id",
        reader,
    )
    return {row[0] for row in rows}, sum(row[1] for row in rows)


async def park_event(
    conn: Connection,
    reader: str,
    notification: Notification,
    error: BaseException | None,
    attempts: int,
) -> str:
    """Park a log event: for ``error``, or (without one) behind the parked event of its
    aggregate; parked again, its attempts add up. Returns the reason given."""
    first = await conn.fetchval(
        "SELECT min(position) FROM parked WHERE reader = $1 AND originator_id = $2",
        reader,
        notification.originator_id,
    )
    reason = (
        reason_of(error)
        if error is not None
        else f"waits behind the parked event at position {first} of the same aggregate"
    )
    await conn.execute(
        "INSERT INTO parked (reader, position, originator_id, originator_version, "
        "topic, error, attempts, behind) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
        "ON CONFLICT (reader, position) DO UPDATE SET error = EXCLUDED.error, "
        "attempts = parked.attempts + EXCLUDED.attempts, released = false",
        reader,
        notification.id,
        notification.originator_id,
        notification.originator_version,
        notification.topic,
        reason,
        attempts,
        None if error is not None else first,
    )
    return reason


async def released_events(conn: Connection, reader: str) -> dict[UUID, list[int]]:
    """The reader's parked events whose aggregate's first parked event was released
    (``feedbackloop parked retry``), by aggregate, in order; the rest of it waits."""
    rows = await conn.fetch(
        "SELECT position, originator_id, released FROM parked "
        "WHERE reader = $1 ORDER BY originator_id, position",
        reader,
    )
    by_aggregate: dict[UUID, list[tuple[int, bool]]] = {}
    for row in rows:
        by_aggregate.setdefault(row["originator_id"], []).append((row["position"], row["released"]))
    return {
        aggregate: [position for position, _ in positions]
        for aggregate, positions in by_aggregate.items()
        if positions[0][1]
    }


async def unpark(conn: asyncpg.Pool | Connection, reader: str, position: int) -> None:
    await conn.execute("DELETE FROM parked WHERE reader = $1 AND position = $2", reader, position)


async def park_again(
    conn: Connection, reader: str, aggregate: UUID, position: int, attempts: int, why: str
) -> None:
    """A released event failed again: it and its aggregate's others wait for a new release."""
    async with conn.transaction():
        await conn.execute(
            "UPDATE parked SET released = false WHERE reader = $1 AND originator_id = $2",
            reader,
            aggregate,
        )
        await conn.execute(
            "UPDATE parked SET attempts = attempts + $3, error = $4 "
            "WHERE reader = $1 AND position = $2",
            reader,
            position,
            attempts,
            why,
        )


async def park_message(
    pool: asyncpg.Pool | Connection,
    *,
    topic: str,
    partition: int,
    offset: int,
    key: bytes | None,
    code: str,
    error: str,
    field: str | None,
    payload_size: int,
    sha256: str,
    head: bytes,
    headers: str,
) -> None:
    """Park an inbound message's trace; one redelivered (same coordinates and hash) once."""
    await pool.execute(
        "INSERT INTO parked (reader, position, topic, partition, \"offset\", key, code, error, "
        "field, payload_size, sha256, head, headers) VALUES ($1, "
        "nextval('parked_message_numbers'), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, "
        "$12::jsonb) ON CONFLICT DO NOTHING",
        INBOUND, topic, partition, offset, key, code, error, field, payload_size, sha256,
        head, headers,
    )  # fmt: skip


async def parked_by_reader(pool: asyncpg.Pool | Connection) -> dict[str, int]:
    """Parked things of the whole instance, by reader (inbound messages as ``INBOUND``),
    whichever process runs the reader."""
    rows = await pool.fetch(
        "SELECT reader, count(*) AS parked FROM parked "
        f"WHERE reader NOT LIKE '{REBUILDS}' GROUP BY reader ORDER BY reader"
    )
    return {row["reader"]: int(row["parked"]) for row in rows}


async def parked_for(pool: asyncpg.Pool | Connection, error: type[BaseException]) -> int:
    """The instance's parked log events whose reason is an ``error`` (``reason_of`` names
    its class first), each event once whichever readers parked it."""
    return int(
        await pool.fetchval(
            "SELECT count(DISTINCT position) FROM parked WHERE error LIKE $1 "
            f"AND reader NOT LIKE '{REBUILDS}' AND reader <> '{INBOUND}'",
            f"{error.__name__}: %",
        )
    )


async def count_parked(pool: asyncpg.Pool | Connection, reader: str) -> int:
    return int(await pool.fetchval("SELECT count(*) FROM parked WHERE reader = $1", reader))


async def forget_parked(conn: asyncpg.Pool | Connection, reader: str) -> None:
    await conn.execute("DELETE FROM parked WHERE reader = $1", reader)


async def hand_over_parked(conn: Connection, source: str, target: str) -> None:
    """A rebuilt read model swapped in: its parked events become the live reader's."""
    await forget_parked(conn, target)
    await conn.execute("UPDATE parked SET reader = $1 WHERE reader = $2", target, source)
