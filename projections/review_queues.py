"""The review queues: each queue's definition, the open reports it offers, who holds which
report and until when, and each queue's progress (decisions D160–D164).

It keeps its own row per submitted report (kind, agent, category, status, when submitted and
when closed: no one's words), so that a queue's filter, its claims and its counts are one
query over its own tables, and a rebuild makes it from the log alone. A claim's expiry is a
time, compared with the reader's clock (``now``): nothing has to run for a claim to lapse.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

from contracts.report_facts import block_of
from projections import events as ev
from services.followers.reader import Connection, Positioned

SCHEMA = "rm_review_queues"
UNKNOWN_AGENT = "(unknown agent)"  # as the Inbox lists a report without a block (W38)
CLOSED = {ev.REPORT_RESOLVED: "Resolved", ev.REPORT_WONT_FIX: "WontFix"}


class ReviewQueues:
    name = "review_queues"
    handles = (
        ev.REPORT_DRAFTED,
        ev.REPORT_SUBMITTED,
        ev.REPORT_HANDED_OVER,
        ev.REPORT_TRIAGED,
        ev.REPORT_RESOLVED,
        ev.REPORT_WONT_FIX,
        ev.REPORT_DELIVERY_FAILED,
        ev.QUEUE_DEFINED,
        ev.QUEUE_CHANGED,
        ev.QUEUE_REMOVED,
        ev.CLAIM_OPENED,
        ev.REPORT_CLAIMED,
        ev.CLAIM_RELEASED,
    )

    def ddl(self, schema: str) -> str:
        return f"""
        CREATE TABLE IF NOT EXISTS {schema}.queues (
            queue_id uuid PRIMARY KEY,
            tenant_id text NOT NULL,
            queue text NOT NULL,
            agent text,
            kind text,
            category text,
            status text,
            min_age_hours integer,
            max_age_hours integer,
            reviewers text[] NOT NULL,
            claim_minutes integer NOT NULL,
            removed boolean NOT NULL DEFAULT false,
            UNIQUE (tenant_id, queue)
        );
        CREATE TABLE IF NOT EXISTS {schema}.reports (
            report_id uuid PRIMARY KEY,
            tenant_id text NOT NULL,
            kind text,
            agent text NOT NULL,
            category text NOT NULL,
            status text NOT NULL,
            in_inbox boolean NOT NULL DEFAULT false,
            submitted_at timestamptz,
            closed_at timestamptz
        );
        CREATE TABLE IF NOT EXISTS {schema}.claims (
            claim_id uuid PRIMARY KEY,
            report_id uuid NOT NULL,
            tenant_id text NOT NULL,
            queue text,
            claimed_by text,
            claimed_at timestamptz,
            expires_at timestamptz
        );
        """

    def indexes(self, schema: str) -> str:
        return f"""
        CREATE INDEX IF NOT EXISTS queue_reports_waiting
            ON {schema}.reports (tenant_id, in_inbox, submitted_at);
        CREATE UNIQUE INDEX IF NOT EXISTS claims_by_report
            ON {schema}.claims (tenant_id, report_id);
        CREATE INDEX IF NOT EXISTS claims_by_holder
            ON {schema}.claims (tenant_id, claimed_by, expires_at);
        """

    async def apply(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        for p in batch:
            e, topic = p.event, ev.topic_of(p.event)
            if topic in REPORT_STEPS:
                await REPORT_STEPS[topic](conn, f"{schema}.reports", e)
            elif topic in (ev.QUEUE_DEFINED, ev.QUEUE_CHANGED):
                await defined(conn, f"{schema}.queues", e, topic == ev.QUEUE_DEFINED)
            elif topic == ev.QUEUE_REMOVED:
                await conn.execute(
                    f"UPDATE {schema}.queues SET removed = true WHERE queue_id = $1",
                    e.originator_id,
                )
            elif topic == ev.CLAIM_OPENED:
                await conn.execute(
                    f"INSERT INTO {schema}.claims (claim_id, report_id, tenant_id) "
                    "VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                    e.originator_id, e.report_id, e.tenant_id,
                )  # fmt: skip
            elif topic == ev.REPORT_CLAIMED:
                await conn.execute(
                    f"UPDATE {schema}.claims SET queue = $2, claimed_by = $3, claimed_at = $4, "
                    "expires_at = $5 WHERE claim_id = $1",
                    e.originator_id, e.queue, e.claimed_by, e.timestamp, e.expires_at,
                )  # fmt: skip
            elif topic == ev.CLAIM_RELEASED:
                await conn.execute(
                    f"UPDATE {schema}.claims SET claimed_by = NULL, expires_at = NULL "
                    "WHERE claim_id = $1",
                    e.originator_id,
                )
            else:
                raise TypeError(f"the review queues do not handle {type(e).__name__}")


async def defined(conn: Connection, table: str, e: Any, first: bool) -> None:
    f = e.filter
    values = (
        f.get("agent"), f.get("kind"), f.get("category"), f.get("status"),
        f.get("minAgeHours"), f.get("maxAgeHours"), list(e.reviewers), e.claim_minutes,
    )  # fmt: skip
    if first:
        await conn.execute(
            f"INSERT INTO {table} (queue_id, tenant_id, queue, agent, kind, category, status, "
            "min_age_hours, max_age_hours, reviewers, claim_minutes) VALUES "
            "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING",
            e.originator_id, e.tenant_id, e.queue, *values,
        )  # fmt: skip
        return
    await conn.execute(
        f"UPDATE {table} SET agent = $2, kind = $3, category = $4, status = $5, "
        "min_age_hours = $6, max_age_hours = $7, reviewers = $8, claim_minutes = $9, "
        "removed = false WHERE queue_id = $1",
        e.originator_id, *values,
    )  # fmt: skip


async def drafted(conn: Connection, table: str, e: Any) -> None:
    block = block_of(e.facts)
    await conn.execute(
        f"INSERT INTO {table} (report_id, tenant_id, kind, agent, category, status) "
        "VALUES ($1, $2, $3, $4, $5, 'Draft') ON CONFLICT DO NOTHING",
        e.originator_id, e.tenant_id, block.kind if block else None,
        (block.agent if block else None) or UNKNOWN_AGENT, e.category,
    )  # fmt: skip


def setting(sql: str, *, at: bool = False) -> Any:
    async def step(conn: Connection, table: str, e: Any) -> None:
        args = (e.originator_id, e.timestamp) if at else (e.originator_id,)
        await conn.execute(f"UPDATE {table} SET {sql} WHERE report_id = $1", *args)

    return step


# What each of a report's events does to its row: only a submitted, not handed-over report
# waits in the Inbox (W30), and a closed one counts as done when it closed.
REPORT_STEPS: dict[str, Any] = {
    ev.REPORT_DRAFTED: drafted,
    ev.REPORT_SUBMITTED: setting("status = 'New', in_inbox = true, submitted_at = $2", at=True),
    ev.REPORT_HANDED_OVER: setting("status = 'HandedOver', submitted_at = $2", at=True),
    ev.REPORT_DELIVERY_FAILED: setting("status = 'New', in_inbox = true"),
    ev.REPORT_TRIAGED: setting("status = 'Triaged'"),
    ev.REPORT_RESOLVED: setting("status = 'Resolved', closed_at = $2", at=True),
    ev.REPORT_WONT_FIX: setting("status = 'WontFix', closed_at = $2", at=True),
}

QUEUE_COLUMNS = (
    "queue, agent, kind, category, status, min_age_hours, max_age_hours, reviewers, claim_minutes"
)
# A report of the queue's filter, as r, of queue q (agent, kind, category; status and age
# where asked): the conditions every query below shares.
MATCHES = (
    "r.tenant_id = q.tenant_id AND (q.agent IS NULL OR r.agent = q.agent) "
    "AND (q.kind IS NULL OR r.kind = q.kind) AND (q.category IS NULL OR r.category = q.category)"
)
WAITING = (
    f"{MATCHES} AND r.in_inbox AND r.status IN ('New', 'Triaged') "
    "AND (q.status IS NULL OR r.status = q.status) "
    "AND (q.min_age_hours IS NULL "
    " OR r.submitted_at <= $2::timestamptz - make_interval(hours => q.min_age_hours)) "
    "AND (q.max_age_hours IS NULL "
    " OR r.submitted_at >= $2::timestamptz - make_interval(hours => q.max_age_hours))"
)
HELD = "c.claimed_by IS NOT NULL AND c.expires_at > $2::timestamptz"


def queue_json(row: asyncpg.Record) -> dict[str, Any]:
    names = {"min_age_hours": "minAgeHours", "max_age_hours": "maxAgeHours"}
    said = ("agent", "kind", "category", "status", "min_age_hours", "max_age_hours")
    return {
        "queue": row["queue"],
        "filter": {names.get(k, k): row[k] for k in said if row[k] is not None},
        "reviewers": list(row["reviewers"]),
        "claimMinutes": row["claim_minutes"],
    }


async def list_queues(
    pool: asyncpg.Pool, tenant_id: str, schema: str = SCHEMA
) -> list[dict[str, Any]]:
    """The tenant's live queues, by name."""
    rows = await pool.fetch(
        f"SELECT {QUEUE_COLUMNS} FROM {schema}.queues WHERE tenant_id = $1 AND NOT removed "
        "ORDER BY queue",
        tenant_id,
    )
    return [queue_json(row) for row in rows]


async def get_queue(
    pool: asyncpg.Pool, tenant_id: str, queue: str, schema: str = SCHEMA
) -> dict[str, Any] | None:
    row = await pool.fetchrow(
        f"SELECT {QUEUE_COLUMNS} FROM {schema}.queues WHERE tenant_id = $1 AND queue = $2 "
        "AND NOT removed",
        tenant_id,
        queue,
    )
    return queue_json(row) if row else None


@dataclass(frozen=True)
class Progress:
    open: int
    claimed: int
    done_today: int
    done_this_week: int
    oldest_waiting: datetime | None


async def queue_progress(
    pool: asyncpg.Pool,
    tenant_id: str,
    queue: str,
    *,
    now: datetime,
    day_start: datetime,
    week_start: datetime,
    schema: str = SCHEMA,
) -> Progress | None:
    """Decisions D164: open = waiting and held by nobody at ``now``; claimed = waiting and
    held; done = of the queue's agent, kind and category, closed since ``day_start`` /
    ``week_start`` (the reader's midnight and Monday); oldest = the earliest submission of
    those waiting unclaimed. None: no such queue."""
    row = await pool.fetchrow(
        f"SELECT "
        f"(SELECT count(*) FROM {schema}.reports r LEFT JOIN {schema}.claims c "
        f" ON c.tenant_id = r.tenant_id AND c.report_id = r.report_id "
        f" WHERE {WAITING} AND NOT coalesce({HELD}, false)) AS open, "
        f"(SELECT count(*) FROM {schema}.reports r JOIN {schema}.claims c "
        f" ON c.tenant_id = r.tenant_id AND c.report_id = r.report_id "
        f" WHERE {WAITING} AND {HELD}) AS claimed, "
        f"(SELECT count(*) FROM {schema}.reports r WHERE {MATCHES} AND r.closed_at >= $3 "
        f" AND r.closed_at <= $2) AS done_today, "
        f"(SELECT count(*) FROM {schema}.reports r WHERE {MATCHES} AND r.closed_at >= $4 "
        f" AND r.closed_at <= $2) AS done_week, "
        f"(SELECT min(r.submitted_at) FROM {schema}.reports r LEFT JOIN {schema}.claims c "
        f" ON c.tenant_id = r.tenant_id AND c.report_id = r.report_id "
        f" WHERE {WAITING} AND NOT coalesce({HELD}, false)) AS oldest "
        f"FROM {schema}.queues q WHERE q.tenant_id = $1 AND q.queue = $5 AND NOT q.removed",
        tenant_id, now, day_start, week_start, queue,
    )  # fmt: skip
    if row is None:
        return None
    return Progress(row["open"], row["claimed"], row["done_today"], row["done_week"], row["oldest"])


async def next_candidates(
    pool: asyncpg.Pool,
    tenant_id: str,
    queue: str,
    *,
    now: datetime,
    limit: int = 20,
    schema: str = SCHEMA,
) -> list[UUID]:
    """The queue's waiting reports held by nobody at ``now``, oldest submission first
    (decisions D163): what "claim next" offers, in order, to the claims that decide."""
    rows = await pool.fetch(
        f"SELECT r.report_id FROM {schema}.queues q JOIN {schema}.reports r ON {WAITING} "
        f"LEFT JOIN {schema}.claims c ON c.tenant_id = r.tenant_id AND c.report_id = r.report_id "
        f"WHERE q.tenant_id = $1 AND q.queue = $3 AND NOT q.removed "
        f"AND NOT coalesce({HELD}, false) ORDER BY r.submitted_at, r.report_id LIMIT $4",
        tenant_id, now, queue, limit,
    )  # fmt: skip
    return [UUID(str(row["report_id"])) for row in rows]  # asyncpg's own UUID type: made plain


async def claims_held_by(
    pool: asyncpg.Pool, tenant_id: str, person: str, *, now: datetime, schema: str = SCHEMA
) -> list[dict[str, Any]]:
    """What ``person`` holds at ``now`` ("assigned to me"), soonest to expire first, with
    the report's kind, agent, category and status."""
    rows = await pool.fetch(
        f"SELECT c.report_id, c.queue, c.claimed_by, c.claimed_at, c.expires_at, r.kind, "
        f"r.agent, r.category, r.status, r.submitted_at FROM {schema}.claims c "
        f"JOIN {schema}.reports r ON r.report_id = c.report_id AND r.tenant_id = c.tenant_id "
        f"WHERE c.tenant_id = $1 AND c.claimed_by = $3 AND {HELD} "
        f"AND r.status IN ('New', 'Triaged') ORDER BY c.expires_at, c.report_id",
        tenant_id, now, person,
    )  # fmt: skip
    return [
        {
            "reportId": str(row["report_id"]),
            "queue": row["queue"],
            "claimedBy": row["claimed_by"],
            "claimedAt": row["claimed_at"].isoformat(),
            "expiresAt": row["expires_at"].isoformat(),
            "kind": row["kind"],
            "agent": row["agent"],
            "category": row["category"],
            "status": row["status"],
            "submittedAt": row["submitted_at"].isoformat() if row["submitted_at"] else None,
        }
        for row in rows
    ]


async def claim_on(
    pool: asyncpg.Pool, tenant_id: str, report_id: UUID, *, now: datetime, schema: str = SCHEMA
) -> dict[str, Any] | None:
    """Who holds ``report_id`` at ``now``, if anyone."""
    row = await pool.fetchrow(
        f"SELECT c.queue, c.claimed_by, c.expires_at FROM {schema}.claims c "
        f"WHERE c.tenant_id = $1 AND c.report_id = $3 AND {HELD}",
        tenant_id, now, report_id,
    )  # fmt: skip
    if row is None:
        return None
    return {
        "queue": row["queue"],
        "claimedBy": row["claimed_by"],
        "expiresAt": row["expires_at"].isoformat(),
    }
