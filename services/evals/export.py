"""Eval runs as an export (decisions D210): every run of the cases ``GET /factory/evals/cases``
lists under the same filters (agent, confirmed), newest first, a page at a time
(``services.edge.exports``); a run's summary and threads are as the case's own page shows
them."""

from projections.eval_cases import count_runs, page_runs
from services.edge.exports import PAGE, Export, Items
from services.followers.reader import Connection

FIELDS = (
    "runId", "caseId", "caseRef", "agent", "ranBy", "runner", "night", "model", "effort",
    "summary.passed", "summary", "threads", "recordedAt",
)  # fmt: skip


def runs_export(
    tenant_id: str, *, agent: str | None = None, confirmed: bool | None = None
) -> Export:
    async def page(conn: Connection, before: int | None) -> Items:
        return await page_runs(
            conn, tenant_id, agent=agent, confirmed=confirmed, before=before, limit=PAGE
        )

    async def count(conn: Connection) -> int:
        return await count_runs(conn, tenant_id, agent=agent, confirmed=confirmed)

    return Export("runs", FIELDS, page, count)
