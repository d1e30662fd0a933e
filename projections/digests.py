"""Weekly digests: every week's tables and what was posted (SPEC W137).

Answers ``GET /factory/feedback/digests`` (every week, newest first) and
``GET /factory/feedback/digests/{week}``; tenant-scoped. Only event data is used, so a rebuild
reproduces the view.

The standing-issue ledger of the triage intake (``projections.standing_issues``, which owns
its tables and queries) runs on this read model's reader, in its schema: one reader of the
log, one connection, for the digests context's read models (decisions D64).
"""

import json
from collections.abc import Sequence
from typing import Any

import asyncpg

from projections import events as ev
from projections.standing_issues import StandingIssues
from services.followers.reader import Connection, Positioned

SCHEMA = "rm_digests"
OWN = frozenset((ev.DIGEST_BUILT, ev.DIGEST_POSTED, ev.DIGEST_DELIVERY_ATTEMPTED))
LEDGER = StandingIssues()
LEDGER_TOPICS = frozenset(LEDGER.handles)


class Digests:
    name = "digests"
    handles = tuple(sorted(OWN | LEDGER_TOPICS))

    def ddl(self, schema: str) -> str:
        return f"""
        CREATE TABLE IF NOT EXISTS {schema}.digests (
            digest_id uuid PRIMARY KEY,
            tenant_id text NOT NULL,
            week text NOT NULL,
            tables jsonb NOT NULL,
            built_at timestamptz NOT NULL,
            posted_at timestamptz,
            routes jsonb NOT NULL DEFAULT '[]',
            identities jsonb NOT NULL DEFAULT '[]',
            note text,
            deliveries jsonb NOT NULL DEFAULT '{{}}',
            position bigint NOT NULL
        );
        CREATE UNIQUE INDEX IF NOT EXISTS digests_by_week ON {schema}.digests (tenant_id, week);
        """ + LEDGER.ddl(schema)

    async def apply(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        await self.apply_own(conn, schema, [p for p in batch if ev.topic_of(p.event) in OWN])
        ledger = [p for p in batch if ev.topic_of(p.event) in LEDGER_TOPICS]
        if ledger:  # other tables: the order between the two parts does not matter
            await LEDGER.apply(conn, schema, ledger)

    async def apply_own(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        table = f"{schema}.digests"
        for p in batch:
            e = p.event
            match ev.topic_of(e):
                case ev.DIGEST_BUILT:
                    await conn.execute(
                        f"INSERT INTO {table} (digest_id, tenant_id, week, tables, built_at, "
                        "position) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
                        e.originator_id, e.tenant_id, e.week, json.dumps(e.tables),
                        e.timestamp, p.position,
                    )  # fmt: skip
                case ev.DIGEST_POSTED:
                    await conn.execute(
                        f"UPDATE {table} SET posted_at = $2, routes = $3, identities = $4, "
                        "note = $5, position = $6 WHERE digest_id = $1",
                        e.originator_id, e.timestamp, json.dumps(e.routes),
                        json.dumps(e.identities), e.note, p.position,
                    )  # fmt: skip
                case ev.DIGEST_DELIVERY_ATTEMPTED:
                    outcome = (
                        "delivered"
                        if e.error is None
                        else f"{'failed' if e.final else 'retrying'}: {e.error}"
                    )
                    await conn.execute(
                        f"UPDATE {table} SET deliveries = deliveries "
                        "|| jsonb_build_object($2::text, $3::text), position = $4 "
                        "WHERE digest_id = $1",
                        e.originator_id, e.agent_id, outcome, p.position,
                    )  # fmt: skip
                case _:
                    raise TypeError(f"digests do not handle {type(e).__name__}")


async def list_digests(
    pool: asyncpg.Pool,
    tenant_id: str,
    *,
    before: str | None = None,
    limit: int = 50,
    schema: str = SCHEMA,
) -> tuple[list[dict[str, Any]], str | None]:
    """The tenant's weeks, newest first (ISO week names sort as time does), a page at a time:
    those before the week ``before``, at most ``limit``; and the week to pass as ``before``
    for the next page (None on the last)."""
    rows = await pool.fetch(
        f"SELECT week, tables, built_at, posted_at FROM {schema}.digests WHERE tenant_id = $1 "
        "AND ($2::text IS NULL OR week < $2) ORDER BY week DESC LIMIT $3",
        tenant_id,
        before,
        limit + 1,
    )
    next_before = rows[limit - 1]["week"] if len(rows) > limit else None
    items = []
    for row in rows[:limit]:
        tables = json.loads(row["tables"])
        items.append(
            {
                "week": row["week"],
                "reports": tables["reports"],
                "agents": len(tables["agents"]),
                "truncated": tables["truncated"],
                "builtAt": row["built_at"].isoformat(),
                "postedAt": row["posted_at"] and row["posted_at"].isoformat(),
            }
        )
    return items, next_before


async def get_digest(
    pool: asyncpg.Pool, tenant_id: str, week: str, *, schema: str = SCHEMA
) -> dict[str, Any] | None:
    """One week of the tenant: its tables and what was posted."""
    row = await pool.fetchrow(
        f"SELECT * FROM {schema}.digests WHERE tenant_id = $1 AND week = $2", tenant_id, week
    )
    if row is None:
        return None
    return {
        "digestId": str(row["digest_id"]),
        "week": row["week"],
        "builtAt": row["built_at"].isoformat(),
        "tables": json.loads(row["tables"]),
        "posted": {
            "postedAt": row["posted_at"] and row["posted_at"].isoformat(),
            "routes": json.loads(row["routes"]),
            "identities": json.loads(row["identities"]),
            "note": row["note"],
            "deliveries": json.loads(row["deliveries"]),
        },
    }
