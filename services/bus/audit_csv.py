"""The audit as CSV, one writer for every door: ``feedbackloop audit export`` writes it to a
file, the console's Audit page sends it as a download (decisions D31). The same rows and
filters as ``GET /factory/audit``, newest first, read a page at a time so that a long trail
is never held whole in memory.

Every cell goes through ``csv_text``, the one way a CSV leaves the service (a later export
writes its rows with it too; tests/unit/test_csv_cells.py fails on a ``csv.writer`` anywhere
else). It keeps OWASP's CSV-injection guidance (decisions D112): a cell beginning with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return is read by a spreadsheet as a formula, so it
is prefixed with a single quote and is text again; every cell is quoted, so a separator inside
one never starts a new cell that could begin a formula of its own. The quote stays visible to
a program reading the file; OWASP accepts that as the lesser harm."""

import csv
import io
from collections.abc import AsyncIterator, Iterable
from typing import Any

import asyncpg

from services.bus.audit import AuditFilter, audit_page

FIELDS = (
    "at", "actor", "roles", "service", "command", "commandId", "aggregates", "result", "reason",
    "items",
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
        str(row["items"]),
    ]


# OWASP's list: what a spreadsheet takes as the start of a formula (or, tab and CR, lets one
# follow).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
TEXT_MARK = "'"


def neutralised(cell: str) -> str:
    """``cell`` as a spreadsheet shows it as text, never as a formula (decisions D112)."""
    return TEXT_MARK + cell if cell.startswith(FORMULA_STARTS) else cell


def csv_text(rows: Iterable[Iterable[str]]) -> str:
    """``rows`` as CSV lines, every cell neutralised and quoted: the service's one writer."""
    text = io.StringIO()
    csv.writer(text, quoting=csv.QUOTE_ALL).writerows(
        [neutralised(cell) for cell in row] for row in rows
    )
    return text.getvalue()


async def audit_csv(
    pool: asyncpg.Pool, tenant_id: str, where: AuditFilter, page: int = PAGE
) -> AsyncIterator[tuple[str, int]]:
    """The tenant's audit matching ``where`` as CSV text: the header first, then a chunk per
    page read, each with the number of rows it holds (an export's progress)."""
    yield csv_text([list(FIELDS)]), 0
    before = None
    while True:
        found, before = await audit_page(pool, tenant_id, where, before=before, limit=page)
        if found:
            yield csv_text([csv_row(row) for row in found]), len(found)
        if before is None:
            return
