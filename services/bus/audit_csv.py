"""The audit as CSV, one writer for every door: ``feedbackloop audit export`` writes it to a
file, the console's Audit page sends it as a download (decisions D31). The same rows and
filters as ``GET /factory/audit``, newest first, read a page at a time so that a long trail
is never held whole in memory."""

import csv
import io
from collections.abc import AsyncIterator
from typing import Any

import asyncpg

from services.bus.audit import AuditFilter, audit_page

FIELDS = (
    "at", "actor", "roles", "service", "command", "commandId", "aggregates", "result", "reason",
)  # fmt: skip
PAGE = 1_000  # audit rows read per query while exporting


def csv_row(row: dict[str, Any]) -> list[str]:
    return [
        row["at"],
        row["actor"],
        " ".join(row["roles"]),
        "true" if row["service"] else "false",
        row["command"],
        row["commandId"],
        " ".join(row["aggregates"]),
        row["result"],
        row["reason"] or "",
    ]


def _lines(rows: list[list[str]]) -> str:
    text = io.StringIO()
    csv.writer(text).writerows(rows)
    return text.getvalue()


async def audit_csv(
    pool: asyncpg.Pool, tenant_id: str, where: AuditFilter, page: int = PAGE
) -> AsyncIterator[tuple[str, int]]:
    """The tenant's audit matching ``where`` as CSV text: the header first, then a chunk per
    page read, each with the number of rows it holds (an export's progress)."""
    yield _lines([list(FIELDS)]), 0
    before = None
    while True:
        found, before = await audit_page(pool, tenant_id, where, before=before, limit=page)
        if found:
            yield _lines([csv_row(row) for row in found]), len(found)
        if before is None:
            return
