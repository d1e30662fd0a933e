"""Exports: the rows of a list as CSV or JSON Lines, streamed a page at a time, each export
one row of the audit (decisions D210–D213).

An export is "filtered like its list": each context builds its ``Export`` from the very
query function and filters its list route uses, read here in pages of ``PAGE`` rows by
the list's own keyset (``before``: a position), so no export is ever held whole in memory.
All its pages are read in one read-only REPEATABLE READ transaction: one snapshot, so a
report whose review moves it up the Inbox while the file is written is neither skipped nor
written twice (D211).

CSV goes through ``csv_text``, the service's one CSV writer (formula-safe, decisions D112):
a nested value (a report's lifecycle, a run's threads) is one cell of JSON text. JSON Lines
are the list's items as its API answers them, one object a line. Neither carries the log
positions a list seals for its cursors (D210). What an erased person wrote reads as the read
models hold it after the erasure, ``[erased]`` (docs/privacy.md): an export reads nothing else.
"""

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

import asyncpg
from fastapi import Query, Request
from fastapi.responses import StreamingResponse

from services.bus import audit_csv
from services.bus.asking import Asking, Caller
from services.bus.audit import AuditTrail
from services.edge.auth import Principal
from services.edge.door_audit import door_of
from services.edge.http import Http
from services.followers.reader import Connection

Format = Literal["csv", "jsonl"]
MEDIA_TYPES: dict[str, str] = {
    "csv": "text/csv; charset=utf-8",
    "jsonl": "application/jsonl; charset=utf-8",
}
# The route's ``format`` parameter; CSV by default, what a spreadsheet opens.
FormatParameter = Annotated[
    Format, Query(description="csv (formula-safe, every cell quoted) or jsonl (JSON Lines)")
]
EXPORT_ANSWERS: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The rows as a file, streamed",
        "content": {"text/csv": {}, "application/jsonl": {}},
    }
}
PAGE = 1_000  # rows read per query: what an export holds in memory at most
Items = tuple[list[dict[str, Any]], int | None]


@dataclass(frozen=True)
class Export:
    """One list as an export. ``fields``: its CSV columns, each a dotted path into an item
    (``review.reviewedBy``); ``page``: the items before a position (None: the newest) and the
    position to ask next; ``count``: how many it holds (a progress bar's total)."""

    name: str
    fields: tuple[str, ...]
    page: Callable[[Connection, int | None], Awaitable[Items]]
    count: Callable[[Connection], Awaitable[int]]


def value_at(item: dict[str, Any], path: str) -> Any:
    found: Any = item
    for part in path.split("."):
        found = found.get(part) if isinstance(found, dict) else None
    return found


def cell(value: Any) -> str:
    """A value as one CSV cell: empty for none, JSON text for a list or an object."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def encoded(export: Export, form: Format, items: list[dict[str, Any]]) -> str:
    if form == "csv":
        return audit_csv.csv_text(
            [cell(value_at(item, path)) for path in export.fields] for item in items
        )
    return "".join(
        json.dumps({k: v for k, v in item.items() if k != "position"}, ensure_ascii=False) + "\n"
        for item in items
    )


@asynccontextmanager
async def snapshot(pool: asyncpg.Pool) -> AsyncIterator[Connection]:
    """One connection in a read-only REPEATABLE READ transaction: every page of an export
    reads the same state of the read models (D211)."""
    async with pool.acquire() as conn, conn.transaction(isolation="repeatable_read", readonly=True):
        yield conn


async def chunks(export: Export, form: Format, conn: Connection) -> AsyncIterator[tuple[str, int]]:
    """The export as text, a page at a time, each with how many rows it holds (the header
    first, with none)."""
    if form == "csv":
        yield audit_csv.csv_text([list(export.fields)]), 0
    before: int | None = None
    while True:
        items, before = await export.page(conn, before)
        if items:
            yield encoded(export, form, items), len(items)
        if before is None:
            return


async def streamed(pool: asyncpg.Pool, export: Export, form: Format) -> AsyncIterator[str]:
    async with snapshot(pool) as conn:
        async for text, _ in chunks(export, form, conn):
            yield text


def file_name(export: Export, tenant_id: str, at: datetime, form: Format) -> str:
    """``<export>-<tenant>-<UTC stamp>.<format>``, the tenant's id kept to safe characters
    (it goes into a header)."""
    tenant = re.sub(r"[^A-Za-z0-9._-]", "_", tenant_id)
    return f"{export.name}-{tenant}-{at.strftime('%Y%m%dT%H%M%SZ')}.{form}"


def download(
    pool: asyncpg.Pool, export: Export, form: Format, tenant_id: str, at: datetime
) -> StreamingResponse:
    """The export as an HTTP download, streamed: the API's and the console's alike."""
    name = file_name(export, tenant_id, at, form)
    return StreamingResponse(
        streamed(pool, export, form),
        media_type=MEDIA_TYPES[form],
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


def audited(
    audit: AuditTrail | None, principal: Principal, door: str, asked: str, at: datetime
) -> None:
    """The export's one row of the audit, written when it is granted (D212): who, at which
    door, which export (the operation: a route's method and path, a CLI command) and in
    which format; never its filters, which may name a person."""
    if audit is None:
        return
    caller = Caller(principal.tenant_id, principal.subject, principal.roles, principal.service)
    audit.granted(Asking(door, asked, caller), at)


def export_download(
    http: Http, request: Request, export: Export, form: Format, principal: Principal
) -> StreamingResponse:
    """A door's export, granted: its audit row, then the file streamed (D212)."""
    at = http.clock()
    path = request.url.path
    audited(http.bus.audit, principal, door_of(path), f"GET {path} ({form})", at)
    return download(http.pool, export, form, principal.tenant_id, at)
