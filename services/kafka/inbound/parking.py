"""Messages that could be neither applied nor written to their dead-letter topic (too big for
it, the broker refusing, or failing for reasons of their own however often tried) are parked
here so the partition can move on. What is kept is enough to find and judge the original
(coordinates, size, hash, the first KiB, headers), never an unbounded copy of it.
"""

import hashlib
import json
from typing import Any

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from contracts.errors import DomainError

HEAD_BYTES = 1024
DDL = """
CREATE TABLE IF NOT EXISTS inbound_parked (
    id bigserial PRIMARY KEY,
    topic text NOT NULL,
    partition integer NOT NULL,
    "offset" bigint NOT NULL,
    key bytea,
    error text NOT NULL,
    reason text NOT NULL,
    field text,
    payload_size integer NOT NULL,
    sha256 text NOT NULL,
    head bytea NOT NULL,
    headers jsonb NOT NULL,
    parked_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (topic, partition, "offset", sha256)
);
-- Each running consumer's heartbeat: what it is doing and how far its partitions lag.
CREATE TABLE IF NOT EXISTS inbound_consumers (
    group_id text NOT NULL,
    member text NOT NULL,
    state text NOT NULL,
    lag bigint NOT NULL,
    settled bigint NOT NULL,
    heartbeat_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (group_id, member)
);
"""


async def ensure_inbound_tables(conn: asyncpg.Connection | PoolConnectionProxy) -> None:
    """Idempotent; call it at start under the global DDL lock (concurrent CREATE ... IF NOT
    EXISTS can still collide in PostgreSQL's catalogue)."""
    await conn.execute(DDL)


def text(value: str | bytes, limit: int = HEAD_BYTES) -> str:
    """Bounded text PostgreSQL can hold (no NUL)."""
    if isinstance(value, bytes):
        value = value[:limit].decode(errors="replace")
    return value[:limit].replace("\x00", "\ufffd")


async def park(pool: asyncpg.Pool, record: Any, error: DomainError, why: str) -> None:
    """Keep the message's trace; a redelivered one is parked once (same coordinates and hash)."""
    value = record.value or b""
    headers = [[text(k, 256), text(v)] for k, v in list(record.headers or ())[:64]]
    await pool.execute(
        'INSERT INTO inbound_parked (topic, partition, "offset", key, error, reason, field,'
        " payload_size, sha256, head, headers) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,"
        " $11::jsonb) ON CONFLICT DO NOTHING",
        record.topic,
        record.partition,
        record.offset,
        None if record.key is None else record.key[:HEAD_BYTES],
        error.code,
        text(f"{error.message}; {why}", 4096),
        error.details.get("field"),
        len(value),
        hashlib.sha256(value).hexdigest(),
        value[:HEAD_BYTES],
        json.dumps(headers),
    )
