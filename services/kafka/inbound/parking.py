"""Messages that could be neither applied nor written to their dead-letter topic (too big for
it, the broker refusing, or failing for reasons of their own however often tried) are parked
so the partition can move on, where every reader parks what it cannot get through
(``services.followers.parking``, reader ``inbound``). What is kept is enough to find and judge
the original (coordinates, size, hash, the first KiB, headers), never an unbounded copy of it.
"""

import hashlib
import json
from typing import Any

from aiokafka import AIOKafkaProducer
from asyncpg import Pool

from contracts.errors import DomainError
from services.followers import heartbeats, parking
from services.followers.reader import Connection

HEAD_BYTES = 1024


async def ensure_inbound_tables(conn: Connection) -> None:
    """The tables the inbound consumers write to: parked messages and heartbeats. Idempotent;
    call it at start under the global DDL lock (concurrent CREATE ... IF NOT EXISTS can still
    collide in PostgreSQL's catalogue)."""
    await conn.execute(heartbeats.DDL + parking.DDL)


def text(value: str | bytes, limit: int = HEAD_BYTES) -> str:
    """Bounded text PostgreSQL can hold (no NUL)."""
    if isinstance(value, bytes):
        value = value[:limit].decode(errors="replace")
    return value[:limit].replace("\x00", "\ufffd")


async def park(pool: Pool, record: Any, error: DomainError, why: str) -> None:
    """Keep the message's trace; a redelivered one is parked once (same coordinates and hash)."""
    value = record.value or b""
    headers = [[text(k, 256), text(v)] for k, v in list(record.headers or ())[:64]]
    await parking.park_message(
        pool,
        topic=record.topic,
        partition=record.partition,
        offset=record.offset,
        key=None if record.key is None else record.key[:HEAD_BYTES],
        code=error.code,
        error=text(f"{error.message}; {why}", 4096),
        field=error.details.get("field"),
        payload_size=len(value),
        sha256=hashlib.sha256(value).hexdigest(),
        head=value[:HEAD_BYTES],
        headers=json.dumps(headers),
    )


async def send_again(pool: Pool, bootstrap: str, position: int) -> str | None:
    """Retry a parked message: its kept copy sent again to its topic, for the consumers to
    apply (by identity: one applied before is recognised, never applied twice), and its trace
    dropped. Only a message kept whole can be (its payload within the head kept, its headers
    within their bounds); returns why not, or None once sent."""
    row = await pool.fetchrow(
        "SELECT topic, key, head, payload_size, headers FROM parked WHERE reader = $1 "
        "AND position = $2",
        parking.INBOUND,
        position,
    )
    if row is None:
        return f"no parked message at position {position}"
    if row["payload_size"] != len(row["head"]):
        return (
            f"only the first {len(row['head'])} of its {row['payload_size']} bytes are kept: "
            "ask its sender to send it again, then skip it"
        )
    headers = [(name, value.encode()) for name, value in json.loads(row["headers"])]
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        await producer.send_and_wait(row["topic"], row["head"], key=row["key"], headers=headers)
    finally:
        await producer.stop()
    await parking.unpark(pool, parking.INBOUND, position)
    return None
