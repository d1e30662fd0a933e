"""Nights by tenant: status, inputs, selected, note and every line (SPEC W87–W90, §3.8).

Answers ``GET /factory/evals/nights`` (newest first) and ``GET /factory/evals/nights/{date}``;
tenant-scoped. The nightly runner reads it to find the nights still Running after a restart.

The agents' changes the next night re-runs first (``projections.agent_changes``, which owns
its tables and query) run on this read model's reader, in its schema (decisions D243).
"""

import json
from collections.abc import Sequence
from typing import Any

import asyncpg

from projections import events as ev
from projections.agent_changes import AgentChanges
from services.followers.reader import Connection, Positioned

SCHEMA = "rm_nights"
OWN = frozenset(
    (ev.NIGHT_PLANNED, ev.NIGHT_CONVERSATION_RECORDED, ev.NIGHT_CASE_FINISHED, ev.NIGHT_FINISHED)
)
CHANGES = AgentChanges()
CHANGES_TOPICS = frozenset(CHANGES.handles)


class Nights:
    name = "nights"
    handles = tuple(sorted(OWN | CHANGES_TOPICS))

    def ddl(self, schema: str) -> str:
        return f"""
        CREATE TABLE IF NOT EXISTS {schema}.nights (
            night_id uuid PRIMARY KEY,
            tenant_id text NOT NULL,
            date date NOT NULL,
            ref text NOT NULL,
            status text NOT NULL,
            inputs jsonb NOT NULL,
            selected jsonb NOT NULL,
            note text NOT NULL,
            lines jsonb NOT NULL,
            conversations int NOT NULL DEFAULT 0,
            planned_at timestamptz NOT NULL,
            finished_at timestamptz,
            position bigint NOT NULL
        );
        CREATE UNIQUE INDEX IF NOT EXISTS nights_by_date ON {schema}.nights (tenant_id, date);
        """ + CHANGES.ddl(schema)

    def indexes(self, schema: str) -> str:
        return f"""
        CREATE INDEX IF NOT EXISTS nights_running ON {schema}.nights (status)
            WHERE status = 'Running';
        """

    async def apply(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        await self.apply_own(conn, schema, [p for p in batch if ev.topic_of(p.event) in OWN])
        changes = [p for p in batch if ev.topic_of(p.event) in CHANGES_TOPICS]
        if changes:  # other tables: the order between the two parts does not matter
            await CHANGES.apply(conn, schema, changes)

    async def apply_own(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        for p in batch:
            e = p.event
            match ev.topic_of(e):
                case ev.NIGHT_PLANNED:
                    await conn.execute(
                        f"INSERT INTO {schema}.nights (night_id, tenant_id, date, ref, status, "
                        "inputs, selected, note, lines, planned_at, position) VALUES ($1, $2, "
                        "$3::text::date, $4, 'Running', $5, $6, $7, $8, $9, $10) "
                        "ON CONFLICT (night_id) DO NOTHING",
                        e.originator_id, e.tenant_id, e.date, e.ref, json.dumps(e.inputs),
                        json.dumps(e.selected), e.note, json.dumps(e.lines), e.timestamp,
                        p.position,
                    )  # fmt: skip
                case ev.NIGHT_CONVERSATION_RECORDED:
                    await conn.execute(
                        f"UPDATE {schema}.nights SET conversations = conversations + 1, "
                        "position = $2 WHERE night_id = $1",
                        e.originator_id, p.position,
                    )  # fmt: skip
                case ev.NIGHT_CASE_FINISHED:
                    await conn.execute(
                        f"UPDATE {schema}.nights SET lines = lines || $2::jsonb, position = $3 "
                        "WHERE night_id = $1",
                        e.originator_id, json.dumps([e.line]), p.position,
                    )  # fmt: skip
                case ev.NIGHT_FINISHED:
                    await conn.execute(
                        f"UPDATE {schema}.nights SET status = $2, finished_at = $3::text::"
                        "timestamptz, note = $4, position = $5 WHERE night_id = $1",
                        e.originator_id, e.status, e.finished_at, e.note, p.position,
                    )  # fmt: skip
                case _:
                    raise TypeError(f"nights do not handle {type(e).__name__}")


def counts(selected: list[Any], lines: list[dict[str, Any]]) -> dict[str, int]:
    outcomes = [line.get("outcome") for line in lines]
    return {
        "selected": len(selected),
        "ran": outcomes.count("ran"),
        "skipped": outcomes.count("skipped"),
        "overCap": outcomes.count("over-cap"),
        "failed": outcomes.count("failed"),
    }


def summary_json(row: asyncpg.Record) -> dict[str, Any]:
    selected, lines = json.loads(row["selected"]), json.loads(row["lines"])
    return {
        "date": row["date"].isoformat(),
        "status": row["status"],
        "counts": counts(selected, lines),
        "plannedAt": row["planned_at"].isoformat(),
        "finishedAt": row["finished_at"].isoformat() if row["finished_at"] else None,
        "position": row["position"],
    }


async def list_nights(
    pool: asyncpg.Pool,
    tenant_id: str,
    *,
    before: str | None = None,
    limit: int = 50,
    schema: str = SCHEMA,
) -> tuple[list[dict[str, Any]], str | None]:
    """The tenant's nights, newest first, a page at a time: those before the night ``before``
    (a date, ``yyyy-MM-dd``), at most ``limit``; and the date to pass as ``before`` for the
    next page (None on the last). A tenant has one night a date: the order is total."""
    rows = await pool.fetch(
        f"SELECT * FROM {schema}.nights WHERE tenant_id = $1 "
        "AND ($2::text IS NULL OR date < $2::text::date) ORDER BY date DESC LIMIT $3",
        tenant_id,
        before,
        limit + 1,
    )
    items = [summary_json(row) for row in rows[:limit]]
    return items, (rows[limit - 1]["date"].isoformat() if len(rows) > limit else None)


async def get_night(
    pool: asyncpg.Pool, tenant_id: str, date: str, schema: str = SCHEMA
) -> dict[str, Any] | None:
    """One night with its inputs, selected, note and lines."""
    row = await pool.fetchrow(
        f"SELECT * FROM {schema}.nights WHERE tenant_id = $1 AND date = $2::text::date",
        tenant_id,
        date,
    )
    if row is None:
        return None
    return {
        **summary_json(row),
        "ref": row["ref"],
        "inputs": json.loads(row["inputs"]),
        "selected": json.loads(row["selected"]),
        "note": row["note"],
        "lines": json.loads(row["lines"]),
        "conversations": row["conversations"],
    }


async def running_nights(pool: asyncpg.Pool, schema: str = SCHEMA) -> list[tuple[str, str]]:
    """(tenant, date) of every night still Running: what a restart resumes (W91)."""
    rows = await pool.fetch(
        f"SELECT tenant_id, date FROM {schema}.nights WHERE status = 'Running' "
        "ORDER BY date, tenant_id"
    )
    return [(row["tenant_id"], row["date"].isoformat()) for row in rows]
