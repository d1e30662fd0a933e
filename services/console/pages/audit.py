"""The Audit page: every command decided in the visitor's tenant, by any door, newest first
(decisions D30, D31) — filtered by actor, aggregate and a window kept in the URL, a page at a
time — and the same rows as a CSV download, written by the writer ``feedbackloop audit
export`` uses (``services.bus.audit_csv``). It reads what ``GET /factory/audit`` reads, under
the same rule: a PlatformAdmin or an Observer of the tenant."""

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import urlencode
from uuid import UUID

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response, StreamingResponse

from contracts.errors import Refused
from services.bus.audit import AuditFilter, audit_page
from services.bus.audit_csv import audit_csv
from services.console.console import Console
from services.console.page import Page
from services.permissions.rules import ADMIN

READERS = (*ADMIN, "Observer")  # decisions D31: who reads the audit
PAGE_SIZE = 50
LISTED = "audit"  # the API's list name: a cursor of either door opens in the other
Text = Annotated[str | None, Query(max_length=512)]


def instant(name: str, value: str | None) -> datetime | None:
    """A window's end as the form gives it (``datetime-local``, read as UTC) or with an
    offset (RFC 3339, as the API takes it)."""
    if not value:
        return None
    try:
        given = datetime.fromisoformat(value)
    except ValueError:
        raise Refused(f"{name} is a date and time, e.g. 2026-12-01T09:00", field=name) from None
    return given if given.tzinfo is not None else given.replace(tzinfo=UTC)


def chosen_filter(
    actor: str | None, aggregate: str | None, since: str | None, until: str | None
) -> AuditFilter:
    """The filters of the URL, checked as the API checks them: bad input is a 422 naming the
    field, never an empty list that looks like an answer."""
    try:
        named = UUID(aggregate) if aggregate else None
    except ValueError:
        raise Refused("aggregate is an aggregate's id (a UUID)", field="aggregate") from None
    start, end = instant("since", since), instant("until", until)
    if start is not None and end is not None and start > end:
        raise Refused("since is after until", field="since")
    return AuditFilter(actor or None, named, start, end)


def audit_routes(console: Console) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    http = console.http

    @router.get("/audit")
    async def audit(
        request: Request,
        actor: Text = None,
        aggregate: Text = None,
        since: Text = None,
        until: Text = None,
        before: Text = None,
    ) -> Response:
        visitor = await console.visitor(request, reads=READERS)
        principal = visitor.principal
        where = chosen_filter(actor, aggregate, since, until)
        await http.bus.flush_audit()  # this process's latest decisions too

        async def fetch(after: str | None) -> tuple[list[dict[str, Any]], int | None]:
            return await audit_page(
                http.pool,
                principal.tenant_id,
                where,
                before=None if after is None else int(after),
                limit=PAGE_SIZE,
            )

        rows, next_before = await http.keyed_page(LISTED, before or None, principal, fetch)
        kept = {
            name: value
            for name, value in (
                ("actor", actor),
                ("aggregate", aggregate),
                ("since", since),
                ("until", until),
            )
            if value
        }
        return console.render(
            visitor,
            "audit.html",
            current="audit",
            rows=rows,
            chosen=kept,
            download=f"/audit.csv?{urlencode(kept)}" if kept else "/audit.csv",
            older=f"/audit?{urlencode({**kept, 'before': next_before})}" if next_before else None,
            first=f"/audit?{urlencode(kept)}" if before else None,
        )

    @router.get("/audit.csv")
    async def download(
        request: Request,
        actor: Text = None,
        aggregate: Text = None,
        since: Text = None,
        until: Text = None,
    ) -> Response:
        visitor = await console.visitor(request, reads=READERS)
        where = chosen_filter(actor, aggregate, since, until)
        await http.bus.flush_audit()

        async def chunks() -> AsyncIterator[str]:
            async for text, _ in audit_csv(http.pool, visitor.principal.tenant_id, where):
                yield text

        stamp = http.clock().strftime("%Y%m%dT%H%M%SZ")
        response = StreamingResponse(
            chunks(),
            media_type="text/csv; charset=utf-8",
            headers={
                "Content-Disposition": (
                    f'attachment; filename="audit-{visitor.principal.tenant_id}-{stamp}.csv"'
                )
            },
        )
        console.keep(response, visitor.session)
        return response

    return router


AUDIT = Page("audit", "/audit", "Audit", READERS, audit_routes)
