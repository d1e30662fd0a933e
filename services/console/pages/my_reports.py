"""My reports: what became of each report its reader filed — its status and, once decided,
what changed and the link, or why it will not be fixed (SPEC W34, decisions D51). The list is
the API's ``GET /factory/reports/mine``: the reporter's own reports and nobody else's."""

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from projections.inbox import list_mine
from services.console.console import Console
from services.console.page import Page

PAGE_SIZE = 50


def my_reports_routes(console: Console) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    http = console.http

    @router.get("/my-reports")
    async def mine(
        request: Request, before: Annotated[str | None, Query(max_length=512)] = None
    ) -> Response:
        visitor = await console.visitor(request)
        items, older = await list_mine(
            http.pool,
            visitor.principal.tenant_id,
            visitor.principal.subject,
            before=http.cursor(before or None, visitor.principal),
            limit=PAGE_SIZE,
        )
        next_before = http.sealed(older, visitor.principal)
        return console.render(
            visitor,
            "my_reports.html",
            items=items,
            older=f"/my-reports?{urlencode({'before': next_before})}" if next_before else None,
            first="/my-reports" if before else None,
        )

    return router


# Everyone signed in may have filed a report (a Requester most of all).
MY_REPORTS = Page("my-reports", "/my-reports", "My reports", (), my_reports_routes)
