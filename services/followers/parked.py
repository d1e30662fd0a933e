"""Operating what is parked (``feedbackloop parked list|show|retry|skip``): log events and
inbound messages alike (``services.followers.parking``).

An event a reader kept failing on is parked with its reason, and the later events of the same
aggregate are parked behind it. Retrying *releases* an aggregate's parked events: the live
reader applies them in order on its next wake and deletes each row that goes through; one that
fails again is parked again with its new reason, with everything behind it. Skipping drops one
parked thing for good (it is never applied by that reader) and releases the ones behind it.
An inbound message is retried by sending its kept copy again to its topic
(``services.kafka.inbound.parking.send_again``).
"""

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

from services.followers.parking import INBOUND
from services.store.event_store import EVENTS_TABLE
from services.store.owners import TENANTS_TABLE

COLUMNS = (
    "reader, position, topic, error, attempts, released, parked_at, originator_id, "
    'originator_version, behind, partition, "offset", code, field, payload_size, sha256'
)


@dataclass(frozen=True)
class Parked:
    reader: str
    position: int
    topic: str
    error: str  # why it is parked
    attempts: int
    released: bool
    parked_at: datetime
    # a log event's
    originator_id: UUID | None = None
    originator_version: int | None = None
    behind: int | None = None
    # an inbound message's
    partition: int | None = None
    offset: int | None = None
    code: str | None = None
    field: str | None = None
    payload_size: int | None = None
    sha256: str | None = None

    @property
    def subject(self) -> str:
        """What was parked, in a few words: an aggregate's version, or a message's place."""
        if self.reader == INBOUND:
            return f"{self.topic}[{self.partition}]@{self.offset}"
        return f"{self.originator_id} v{self.originator_version}"


async def list_parked(pool: asyncpg.Pool, reader: str | None = None) -> list[Parked]:
    rows = await pool.fetch(
        f"SELECT {COLUMNS} FROM parked WHERE $1::text IS NULL OR reader = $1 "
        "ORDER BY reader, position",
        reader,
    )
    return [Parked(**dict(row)) for row in rows]


@dataclass(frozen=True)
class TenantParked:
    """A page of a tenant's parked events; ``after``: the (reader, position) to pass for the
    next page (None on the last); ``own``: all of the tenant's parked events; ``others``:
    everything else parked, a count only."""

    items: list[Parked]
    after: tuple[str, int] | None
    own: int
    others: int


async def tenant_parked(
    pool: asyncpg.Pool, tenant_id: str, after: tuple[str, int] | None = None, limit: int = 50
) -> TenantParked:
    """The parked log events of ``tenant_id``'s aggregates (its own ``aggregate_tenants``
    entry), by reader and position, after ``after``; and how many other things are parked:
    another tenant's events and the inbound messages, which name no tenant the service can
    vouch for (they were parked because they could not be read), are a count to this tenant,
    never content (decisions D94)."""
    reader, position = after if after is not None else (None, None)
    # One snapshot: the page and both counts agree while the reader deletes what it applies.
    async with pool.acquire() as conn, conn.transaction(isolation="repeatable_read"):
        rows = await conn.fetch(
            f"SELECT {', '.join('p.' + c.strip() for c in COLUMNS.split(','))} FROM parked p "
            f"JOIN {TENANTS_TABLE} t ON t.aggregate_id = p.originator_id AND t.tenant_id = $1 "
            "WHERE $2::text IS NULL OR (p.reader, p.position) > ($2, $3::bigint) "
            "ORDER BY p.reader, p.position LIMIT $4",
            tenant_id, reader, position, limit + 1,
        )  # fmt: skip
        counted = await conn.fetchrow(
            "SELECT count(*) AS everything, count(t.tenant_id) AS own FROM parked p "
            f"LEFT JOIN {TENANTS_TABLE} t ON t.aggregate_id = p.originator_id "
            "AND t.tenant_id = $1",
            tenant_id,
        )
    assert counted is not None  # an aggregate query answers one row
    own, everything = int(counted["own"]), int(counted["everything"])
    items = [Parked(**dict(row)) for row in rows[:limit]]
    last = (items[-1].reader, items[-1].position) if items and len(rows) > limit else None
    return TenantParked(items, last, own, everything - own)


async def owned_by(pool: asyncpg.Pool, tenant_id: str, reader: str, position: int) -> bool:
    """Whether the log event ``reader`` parked at ``position`` is one of ``tenant_id``'s
    aggregates: another tenant's, an inbound message and nothing parked all answer False."""
    found = await pool.fetchval(
        f"SELECT 1 FROM parked p JOIN {TENANTS_TABLE} t ON t.aggregate_id = p.originator_id "
        "AND t.tenant_id = $1 WHERE p.reader = $2 AND p.position = $3",
        tenant_id,
        reader,
        position,
    )
    return found is not None


async def show_parked(pool: asyncpg.Pool, reader: str, position: int) -> dict[str, Any] | None:
    """Everything kept of one parked thing (an inbound message's head and headers too)."""
    row = await pool.fetchrow(
        "SELECT * FROM parked WHERE reader = $1 AND position = $2", reader, position
    )
    if row is None:
        return None
    shown = {name: value for name, value in dict(row).items() if value is not None}
    if "headers" in shown:
        shown["headers"] = json.loads(shown["headers"])
    return shown


async def release(pool: asyncpg.Pool, reader: str, position: int | None = None) -> int:
    """Release the parked events of the aggregate parked at ``position`` (all of the
    reader's, without one); returns how many were released."""
    result = await pool.execute(
        "UPDATE parked SET released = true WHERE reader = $1 AND ($2::bigint IS NULL "
        "OR originator_id = (SELECT originator_id FROM parked "
        "WHERE reader = $1 AND position = $2))",
        reader,
        position,
    )
    released = int(result.split()[-1])
    if released:
        await pool.execute("SELECT pg_notify($1, 'released')", EVENTS_TABLE)
    return released


async def release_of_tenant(pool: asyncpg.Pool, tenant_id: str, reader: str, position: int) -> int:
    """``release`` (what ``feedbackloop parked retry READER --position P`` does) of the
    aggregate parked at ``position``, only when it is one of ``tenant_id``'s: another
    tenant's answers 0, as nothing parked there does (decisions D94)."""
    if not await owned_by(pool, tenant_id, reader, position):
        return 0
    return await release(pool, reader, position)


async def skip(pool: asyncpg.Pool, reader: str, position: int) -> bool:
    """Drop one parked thing for good and release the events behind it."""
    async with pool.acquire() as conn, conn.transaction():
        dropped = await conn.fetchrow(
            "DELETE FROM parked WHERE reader = $1 AND position = $2 RETURNING originator_id",
            reader,
            position,
        )
        if dropped is None:
            return False
        if dropped["originator_id"] is not None:
            await conn.execute(
                "UPDATE parked SET released = true, behind = NULL "
                "WHERE reader = $1 AND originator_id = $2",
                reader,
                dropped["originator_id"],
            )
    return True
