"""What the digest reads, from the read models that already hold it (SPEC W107, W108, W112).

The reports come from the Inbox (every report with the facts parsed once at the door, only
submitted ones, so a draft is never read, W116); the cases from the eval cases. Both reads are
the tenant's, asked by the service, and bounded: the reports newest first, at most ``bound`` of
them, so a full page says the digest is truncated.
"""

from datetime import datetime

import asyncpg

from projections import eval_cases as cases_model
from projections import inbox as inbox_model
from services.digests.build import CaseFact, ReportFact

INBOX = inbox_model.SCHEMA
EVAL_CASES = cases_model.SCHEMA


async def tenants_with_reports(pool: asyncpg.Pool, *, schema: str = INBOX) -> list[str]:
    """Every tenant that has ever submitted a report."""
    return await inbox_model.tenants_with_reports(pool, schema)


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
    rows = await inbox_model.submitted_between(
        pool, tenant_id, start, end, bound=bound, schema=schema
    )
    return [
        ReportFact(r["report_id"], r["submitted_at"], r["kind"], r["agent"], r["model"])
        for r in rows
    ]


async def eval_cases(
    pool: asyncpg.Pool, tenant_id: str, *, schema: str = EVAL_CASES
) -> list[CaseFact]:
    """Every eval case of the tenant with its last verdict of each runner (W108, W58)."""
    rows = await cases_model.case_verdicts(pool, tenant_id, schema)
    return [CaseFact(r["ref"], r["agent"], r["source"], r["verdicts"]) for r in rows]
