"""Operating parked events (``feedbackloop parked list|retry|skip``).

An event a reader kept failing on is parked with its reason, and the later events of the same
aggregate are parked behind it (``services/followers/follower.py``). Retrying *releases* an
aggregate's
parked events: the live reader applies them in order on its next wake and deletes each row
that goes through; one that fails again is parked again with its new reason, with everything
behind it. Skipping drops one parked event for good (it is never applied by that reader) and
releases the ones behind it.
"""

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

import asyncpg

from services.store.event_store import EVENTS_TABLE


@dataclass(frozen=True)
class Parked:
    reader: str
    position: int
    originator_id: UUID
    originator_version: int
    topic: str
    error: str
    attempts: int
    behind: int | None
    released: bool
    parked_at: datetime


async def list_parked(pool: asyncpg.Pool, reader: str | None = None) -> list[Parked]:
    rows = await pool.fetch(
        "SELECT reader, position, originator_id, originator_version, topic, error, attempts, "
        "behind, released, parked_at FROM parked_events "
        "WHERE $1::text IS NULL OR reader = $1 ORDER BY reader, position",
        reader,
    )
    return [Parked(**dict(row)) for row in rows]


async def release(pool: asyncpg.Pool, reader: str, position: int | None = None) -> int:
    """Release the parked events of the aggregate parked at ``position`` (all of the
    reader's, without one); returns how many were released."""
    result = await pool.execute(
        "UPDATE parked_events SET released = true WHERE reader = $1 AND ($2::bigint IS NULL "
        "OR originator_id = (SELECT originator_id FROM parked_events "
        "WHERE reader = $1 AND position = $2))",
        reader,
        position,
    )
    released = int(result.split()[-1])
    if released:
        await pool.execute("SELECT pg_notify($1, 'released')", EVENTS_TABLE)
    return released


async def skip(pool: asyncpg.Pool, reader: str, position: int) -> bool:
    """Drop one parked event for good and release the ones behind it."""
    async with pool.acquire() as conn, conn.transaction():
        aggregate = await conn.fetchval(
            "DELETE FROM parked_events WHERE reader = $1 AND position = $2 RETURNING originator_id",
            reader,
            position,
        )
        if aggregate is None:
            return False
        await conn.execute(
            "UPDATE parked_events SET released = true, behind = NULL "
            "WHERE reader = $1 AND originator_id = $2",
            reader,
            aggregate,
        )
    return True
