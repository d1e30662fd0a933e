"""What the digest reads, from the read models that already hold it (SPEC W107, W108, W112).

The reports come from the Inbox's table (every report with the facts parsed once at the door,
``submitted_at`` set only once submitted, so a draft is never read, W116); the cases from the
eval cases' table. Both reads are the tenant's, asked by the service, and bounded: the reports
newest first, at most ``bound`` of them, so a full page says the digest is truncated.
"""

from datetime import datetime

import asyncpg

from services.digests.build import CaseFact, ReportFact

INBOX = "rm_inbox"
EVAL_CASES = "rm_eval_cases"


async def tenants_with_reports(pool: asyncpg.Pool, *, schema: str = INBOX) -> list[str]:
    """Every tenant that has ever submitted a report."""
    rows = await pool.fetch(
        f"SELECT DISTINCT tenant_id FROM {schema}.reports WHERE submitted_at IS NOT NULL "
        "ORDER BY tenant_id"
    )
    return [row["tenant_id"] for row in rows]


async def submitted_reports(
    pool: asyncpg.Pool,
    tenant_id: str,
    start: datetime,
    end: datetime,
    *,
    bound: int,
    schema: str = INBOX,
) -> list[ReportFact]:
    """The tenant's reports submitted in ``[start, end)``, newest first, at most ``bound``."""
    rows = await pool.fetch(
        f"SELECT report_id, submitted_at, kind, agent, model FROM {schema}.reports "
        "WHERE tenant_id = $1 AND submitted_at >= $2 AND submitted_at < $3 "
        "ORDER BY submitted_at DESC, report_id LIMIT $4",
        tenant_id,
        start,
        end,
        bound,
    )
    return [
        ReportFact(r["report_id"], r["submitted_at"], r["kind"], r["agent"], r["model"])
        for r in rows
    ]


async def eval_cases(
    pool: asyncpg.Pool, tenant_id: str, *, schema: str = EVAL_CASES
) -> list[CaseFact]:
    """Every eval case of the tenant with its last verdict (W108)."""
    rows = await pool.fetch(
        f"SELECT ref, agent, source, passed, last_run IS NOT NULL AS ran FROM {schema}.cases "
        "WHERE tenant_id = $1 ORDER BY ref",
        tenant_id,
    )
    return [
        CaseFact(r["ref"], r["agent"], r["source"], r["passed"] if r["ran"] else None) for r in rows
    ]
