"""Messages that could be neither applied nor written to their dead-letter topic (too big for
it, the broker refusing, or failing for reasons of their own however often tried) are parked
so the partition can move on, where every reader parks what it cannot get through
(``services.followers.parking``, reader ``inbound``). What is kept is enough to find and judge
the original (coordinates, size, hash, the first KiB, headers), never an unbounded copy of it.
"""

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
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


TENANT_HEADER = "ce_tenantid"  # binary mode: a CloudEvents attribute is a ce_ header


def tenant_of(head: bytes, payload_size: int, headers: list[list[str]]) -> str | None:
    """The tenant a parked message names (decisions D96): the CloudEvents ``tenantid``, its
    binary-mode header ``ce_tenantid`` among the kept headers or, in structured mode, the
    ``tenantid`` of the kept JSON when the message was kept whole. None when it names no
    readable tenant (cut short, not JSON, no such attribute): that message is nobody's
    Operator's, and stays the instance operator's (``feedbackloop parked retry inbound``)."""
    for name, value in headers:
        if name == TENANT_HEADER:
            return value or None
    if payload_size != len(head):
        return None
    try:
        event = json.loads(head)
    except ValueError:
        return None
    tenant = event.get("tenantid") if isinstance(event, dict) else None
    return tenant if isinstance(tenant, str) and tenant else None


@dataclass(frozen=True)
class ParkedMessage:
    position: int
    topic: str
    partition: int
    offset: int
    reason: str
    code: str | None
    payload_size: int
    whole: bool  # kept whole: it can be sent again
    parked_at: datetime


@dataclass(frozen=True)
class TenantMessages:
    """A page of a tenant's parked messages; ``after``: the position to pass for the next
    page (None on the last); ``own``: all of the tenant's; ``others``: every other parked
    message (another tenant's, or naming none), a count only."""

    items: list[ParkedMessage]
    after: int | None
    own: int
    others: int


async def tenant_messages(
    pool: Pool, tenant_id: str, after: int | None = None, limit: int = 50
) -> TenantMessages:
    """The parked messages naming ``tenant_id`` (``tenant_of``), by position, after
    ``after``. The tenant is read from the kept bytes, so every parked message is read: few
    are parked (each is one an operator must see to), and each row holds at most a KiB."""
    rows = await pool.fetch(
        'SELECT position, topic, partition, "offset", error, code, payload_size, head, '
        "headers, parked_at FROM parked WHERE reader = $1 ORDER BY position",
        parking.INBOUND,
    )
    ours = [row for row in rows if tenant_of_row(row) == tenant_id]
    following = [row for row in ours if after is None or row["position"] > after]
    items = [message_of(row) for row in following[:limit]]
    last = items[-1].position if items and len(following) > limit else None
    return TenantMessages(items, last, len(ours), len(rows) - len(ours))


def message_of(row: Any) -> ParkedMessage:
    return ParkedMessage(
        row["position"], row["topic"], row["partition"], row["offset"], row["error"],
        row["code"], row["payload_size"], row["payload_size"] == len(row["head"]),
        row["parked_at"],
    )  # fmt: skip


def tenant_of_row(row: Any) -> str | None:
    return tenant_of(row["head"], row["payload_size"], json.loads(row["headers"] or "[]"))


async def message_of_tenant(pool: Pool, tenant_id: str, position: int) -> bool:
    """Whether the message parked at ``position`` names ``tenant_id``: another tenant's, one
    naming none and nothing parked all answer False (the API's 404)."""
    row = await pool.fetchrow(
        "SELECT payload_size, head, headers FROM parked WHERE reader = $1 AND position = $2",
        parking.INBOUND,
        position,
    )
    return row is not None and tenant_of_row(row) == tenant_id
