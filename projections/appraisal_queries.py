"""The appraisal read model's queries: its rows as recorded, read for the appraisal context
(what they mean is that context's). The tables, their DDL and how events land in them are in
``projections/appraisal.py``; the two modules are the one read model.
"""

import json
from datetime import datetime

import asyncpg

from projections.appraisal import SCHEMA

# Queries: the rows as recorded (what they mean is the appraisal context's). The sources of
# facts, each read on its own: one may be unreadable while the others are not.
FACT_SOURCES = ("feedback", "reports", "evals", "runs", "outcomes", "passes")


async def charter_row(
    pool: asyncpg.Pool, tenant_id: str, schema: str = SCHEMA
) -> asyncpg.Record | None:
    """The tenant's charter as parsed at the door (``document, lines, findings, written_by,
    written_at``; lines and findings as JSON text), or None when none was written."""
    return await pool.fetchrow(
        f"SELECT document, lines, findings, written_by, written_at FROM {schema}.charters "
        "WHERE tenant_id = $1",
        tenant_id,
    )


async def charter_line_ids(
    pool: asyncpg.Pool, tenant_id: str, schema: str = SCHEMA
) -> tuple[str, ...]:
    """The ids of the tenant's charter lines, in rank order; none without a charter."""
    row = await charter_row(pool, tenant_id, schema)
    return () if row is None else tuple(str(line["id"]) for line in json.loads(row["lines"]))


def window(column: str, first: int) -> str:
    return (
        f" AND (${first}::timestamptz IS NULL OR {column} >= ${first})"
        f" AND (${first + 1}::timestamptz IS NULL OR {column} < ${first + 1})"
    )


def fact_query(source: str, schema: str) -> str:
    """One source's rows of a tenant ($1), a run ($2) or an agent ($3), in a window ($4, $5)."""
    runs_of_agent = f"(SELECT run_id FROM {schema}.runs WHERE tenant_id = $1 AND agent = $3)"
    match source:
        case "feedback":
            return (
                f"SELECT * FROM {schema}.feedback WHERE tenant_id = $1 "
                "AND ($2::text IS NULL OR run_id = $2) "
                f"AND ($3::text IS NULL OR run_id IN {runs_of_agent})" + window("at", 4)
            )
        case "reports":  # submitted answer reports with a kind: the ones that sign an outcome
            return (
                f"SELECT * FROM {schema}.reports WHERE tenant_id = $1 "
                "AND submitted_at IS NOT NULL AND (kind IS NOT NULL OR category = 'answer') "
                "AND ($2::text IS NULL OR run_id = $2) AND ($3::text IS NULL OR agent = $3)"
                + window("submitted_at", 4)
            )
        case "evals":
            return (
                f"SELECT * FROM {schema}.eval_runs WHERE tenant_id = $1 "
                "AND ($2::text IS NULL OR run_id = $2) AND ($3::text IS NULL OR agent = $3)"
                + window("at", 4)
            )
        case "runs":
            return (
                f"SELECT * FROM {schema}.runs WHERE tenant_id = $1 "
                "AND ($2::text IS NULL OR run_id = $2) AND ($3::text IS NULL OR agent = $3)"
                + window("completed_at", 4)
            )
        case "outcomes" | "passes":  # of the runs in scope, whenever recorded
            table = "owner_outcomes" if source == "outcomes" else "passes"
            return (
                f"SELECT * FROM {schema}.{table} WHERE tenant_id = $1 "
                "AND ($2::text IS NULL OR run_id = $2) "
                f"AND ($3::text IS NULL OR run_id IN {runs_of_agent}) AND run_id IN "
                f"(SELECT run_id FROM {schema}.runs WHERE tenant_id = $1"
                + window("completed_at", 4)
                + ")"
            )
    raise ValueError(f"no source of facts named {source!r}")


async def fact_rows(
    pool: asyncpg.Pool,
    tenant_id: str,
    source: str,
    *,
    run_id: str | None,
    agent: str | None,
    since: datetime | None,
    until: datetime | None,
    limit: int,
    schema: str = SCHEMA,
) -> list[asyncpg.Record]:
    """At most ``limit`` rows of one of ``FACT_SOURCES``, of the tenant's run ``run_id``, agent
    ``agent`` or of all of its runs, recorded in ``[since, until)``. Raises if unreadable."""
    return await pool.fetch(
        f"{fact_query(source, schema)} LIMIT {int(limit)}",
        tenant_id, run_id, agent, since, until,
    )  # fmt: skip


async def appraised_agents(
    pool: asyncpg.Pool, tenant_id: str, after: str | None, limit: int, schema: str = SCHEMA
) -> list[str]:
    """The agents the tenant's facts name (a run, a report or an eval run), by name: the
    first ``limit`` after ``after`` (from the first without it)."""
    rows = await pool.fetch(
        "SELECT agent FROM ("
        f"SELECT agent FROM {schema}.runs WHERE tenant_id = $1 AND NOT development "
        f"UNION SELECT agent FROM {schema}.reports WHERE tenant_id = $1 AND agent IS NOT NULL "
        f"UNION SELECT agent FROM {schema}.eval_runs WHERE tenant_id = $1"
        ") named WHERE $2::text IS NULL OR agent > $2 ORDER BY agent LIMIT $3",
        tenant_id,
        after,
        int(limit),
    )
    return [str(row["agent"]) for row in rows]


async def eval_runs_since(
    pool: asyncpg.Pool, tenant_id: str, since: datetime | None, schema: str = SCHEMA
) -> tuple[int, int]:
    """The tenant's eval runs since ``since``, and how many of them failed."""
    row = await pool.fetchrow(
        f"SELECT count(*) AS runs, count(*) FILTER (WHERE NOT passed) AS failed "
        f"FROM {schema}.eval_runs WHERE tenant_id = $1 "
        "AND ($2::timestamptz IS NULL OR at >= $2)",
        tenant_id,
        since,
    )
    return (0, 0) if row is None else (row["runs"], row["failed"])


async def agents_outbox(
    pool: asyncpg.Pool, tenant_id: str, schema: str = SCHEMA
) -> list[asyncpg.Record]:
    """Each agent's latest appraised run's outbox and questions, as it reported them
    (``pendingDrafts``, ``oldestPendingDraftAt``, ``parkedQuestions``,
    ``oldestParkedQuestionAt``; null where that run did not measure them)."""
    return await pool.fetch(
        f"SELECT DISTINCT ON (agent) agent, counters->>'pendingDrafts' AS pending, "
        "counters->>'oldestPendingDraftAt' AS oldest_draft, "
        "counters->>'parkedQuestions' AS parked, "
        "counters->>'oldestParkedQuestionAt' AS oldest_question "
        f"FROM {schema}.runs WHERE tenant_id = $1 AND NOT development "
        "ORDER BY agent, completed_at DESC",
        tenant_id,
    )


async def intervened_runs(
    pool: asyncpg.Pool, tenant_id: str, since: datetime | None, schema: str = SCHEMA
) -> tuple[int, int]:
    """The tenant's appraised runs since ``since``, and how many of them had an escalation or
    a correction (the intervention_rate sensor, decisions D35)."""
    row = await pool.fetchrow(
        f"SELECT count(*) AS runs, count(*) FILTER (WHERE EXISTS (SELECT 1 FROM "
        f"{schema}.feedback f WHERE f.tenant_id = r.tenant_id AND f.run_id = r.run_id "
        "AND f.kind IN ('escalation', 'correction'))) AS intervened "
        f"FROM {schema}.runs r WHERE r.tenant_id = $1 AND NOT r.development "
        "AND ($2::timestamptz IS NULL OR r.completed_at >= $2)",
        tenant_id,
        since,
    )
    return (0, 0) if row is None else (row["runs"], row["intervened"])


async def latest_runs(
    pool: asyncpg.Pool, tenant_id: str, count: int, schema: str = SCHEMA
) -> list[asyncpg.Record]:
    """The tenant's last ``count`` appraised runs, newest first (``completed_at``,
    ``counters`` as JSON text)."""
    return await pool.fetch(
        f"SELECT run_id, agent, completed_at, counters FROM {schema}.runs "
        "WHERE tenant_id = $1 AND NOT development ORDER BY completed_at DESC LIMIT $2",
        tenant_id,
        count,
    )


async def open_closures(
    pool: asyncpg.Pool, tenant_id: str, limit: int, schema: str = SCHEMA
) -> list[asyncpg.Record]:
    """Closed-task transitions noted but not yet appraised (``transition_id``, ``task_id``,
    ``status``, ``run_ids`` as JSON text), oldest first."""
    return await pool.fetch(
        f"SELECT transition_id, task_id, status, run_ids FROM {schema}.closures "
        "WHERE tenant_id = $1 AND label IS NULL ORDER BY closed_at LIMIT $2",
        tenant_id,
        limit,
    )


async def tenants_with_open_closures(pool: asyncpg.Pool, schema: str = SCHEMA) -> list[str]:
    """The tenants with a closed-task transition noted and not yet appraised."""
    rows = await pool.fetch(
        f"SELECT DISTINCT tenant_id FROM {schema}.closures WHERE label IS NULL ORDER BY 1"
    )
    return [row["tenant_id"] for row in rows]


async def closure_row(
    pool: asyncpg.Pool, tenant_id: str, transition_id: str, schema: str = SCHEMA
) -> asyncpg.Record | None:
    """One transition's closure (``task_id``, ``status``, ``label``, ``follow_up``)."""
    return await pool.fetchrow(
        f"SELECT task_id, status, label, follow_up FROM {schema}.closures "
        "WHERE tenant_id = $1 AND transition_id = $2",
        tenant_id,
        transition_id,
    )
