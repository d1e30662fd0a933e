"""The standing-issue ledger: per agent, the issue its weekly digests go to, and every weekly
item the triage intake took in (SPEC W131–W136).

Answers ``GET /factory/feedback/standing-issues`` and ``…/standing-issues/{agent}`` and
``feedbackloop intake show``; tenant-scoped. W136: the ledger counts the digests it took in
in a column of their own (``digests``), apart from the comments made (``comments``). Only
event data is used, so a rebuild reproduces the ledger.

It runs on the digests read model's reader, in its schema (``projections.digests``): one
reader of the log, one connection, for the digests context's read models (as decisions D57
does for the learning context's); this module owns its tables, its apply and its queries.
"""

from collections.abc import Sequence
from typing import Any

import asyncpg

from projections import events as ev
from services.followers.reader import Connection, Positioned

SCHEMA = "rm_digests"  # the digests read model's, whose reader applies this part
OUTCOMES = {ev.TRIAGE_FILED: "filed", ev.TRIAGE_COMMENTED: "commented",
            ev.TRIAGE_UNROUTED: "unrouted"}  # fmt: skip


class StandingIssues:
    """A part of the digests read model: its events, tables and apply."""

    handles = (ev.TRIAGE_FILED, ev.TRIAGE_COMMENTED, ev.TRIAGE_UNROUTED)

    def ddl(self, schema: str) -> str:
        return f"""
        CREATE TABLE IF NOT EXISTS {schema}.items (
            tenant_id text NOT NULL,
            item_id text NOT NULL,
            agent text NOT NULL,
            week text NOT NULL,
            outcome text NOT NULL,
            issue_url text,
            comment_url text,
            finding text,
            taken_at timestamptz NOT NULL,
            position bigint NOT NULL,
            PRIMARY KEY (tenant_id, item_id)
        );
        CREATE INDEX IF NOT EXISTS items_by_agent ON {schema}.items (tenant_id, agent, week);
        CREATE TABLE IF NOT EXISTS {schema}.ledger (
            tenant_id text NOT NULL,
            agent text NOT NULL,
            repository text,
            issue_url text,
            digests integer NOT NULL,
            comments integer NOT NULL,
            last_week text NOT NULL,
            finding text,
            position bigint NOT NULL,
            PRIMARY KEY (tenant_id, agent)
        );
        """

    async def apply(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        for p in batch:
            e = p.event
            outcome = OUTCOMES.get(ev.topic_of(e))
            if outcome is None:
                raise TypeError(f"standing issues do not handle {type(e).__name__}")
            issue_url = getattr(e, "issue_url", None)
            finding = getattr(e, "finding", None)
            taken = await conn.fetchval(
                f"INSERT INTO {schema}.items (tenant_id, item_id, agent, week, outcome, "
                "issue_url, comment_url, finding, taken_at, position) VALUES "
                "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING RETURNING 1",
                e.tenant_id, e.item_id, e.agent, e.week, outcome, issue_url,
                getattr(e, "comment_url", None), finding, e.timestamp, p.position,
            )  # fmt: skip
            if taken is None:
                continue  # an item is taken in once: counted once
            # W136: every item is a digest taken in; only a comment counts as a comment. An
            # unrouted item keeps the issue the agent had, and says why it was not filed.
            await conn.execute(
                f"INSERT INTO {schema}.ledger AS l (tenant_id, agent, repository, issue_url, "
                "digests, comments, last_week, finding, position) "
                "VALUES ($1, $2, $3, $4, 1, $5, $6, $7, $8) "
                "ON CONFLICT (tenant_id, agent) DO UPDATE SET "
                "repository = COALESCE(EXCLUDED.repository, l.repository), "
                "issue_url = COALESCE(EXCLUDED.issue_url, l.issue_url), "
                "digests = l.digests + 1, comments = l.comments + EXCLUDED.comments, "
                "last_week = GREATEST(l.last_week, EXCLUDED.last_week), "
                "finding = EXCLUDED.finding, position = EXCLUDED.position",
                e.tenant_id, e.agent, getattr(e, "repository", None), issue_url,
                1 if outcome == "commented" else 0, e.week, finding, p.position,
            )  # fmt: skip


def _standing(row: asyncpg.Record) -> dict[str, Any]:
    return {
        "agent": row["agent"],
        "repository": row["repository"],
        "issueUrl": row["issue_url"],
        "digests": row["digests"],
        "comments": row["comments"],
        "lastWeek": row["last_week"],
        "finding": row["finding"],
    }


async def list_standing_issues(
    pool: asyncpg.Pool, tenant_id: str, *, schema: str = SCHEMA
) -> list[dict[str, Any]]:
    """Every agent's standing issue of the tenant, by agent."""
    rows = await pool.fetch(
        f"SELECT * FROM {schema}.ledger WHERE tenant_id = $1 ORDER BY agent", tenant_id
    )
    return [_standing(row) for row in rows]


async def get_standing_issue(
    pool: asyncpg.Pool, tenant_id: str, agent: str, *, schema: str = SCHEMA
) -> dict[str, Any] | None:
    """One agent's standing issue and its items, newest week first."""
    row = await pool.fetchrow(
        f"SELECT * FROM {schema}.ledger WHERE tenant_id = $1 AND agent = $2", tenant_id, agent
    )
    if row is None:
        return None
    items = await pool.fetch(
        f"SELECT * FROM {schema}.items WHERE tenant_id = $1 AND agent = $2 ORDER BY week DESC",
        tenant_id,
        agent,
    )
    return {
        "standing": _standing(row),
        "items": [
            {
                "itemId": i["item_id"],
                "week": i["week"],
                "outcome": i["outcome"],
                "issueUrl": i["issue_url"],
                "commentUrl": i["comment_url"],
                "finding": i["finding"],
                "takenAt": i["taken_at"].isoformat(),
            }
            for i in items
        ],
    }
