"""The Appraisal page: each agent's label over a window (``since``/``until`` in the URL) and
its valence as two sums, positive and negative shown apart and never netted (SPEC M40, M41);
one agent opened shows the signed outcomes behind them. Derived on read by the appraisal
context's own read (``services.appraisal.appraisals``), as the API derives it (M35). The
charter editor is its sub-page (``charter.py``).
"""

from datetime import UTC, date, datetime, time
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from contracts.errors import Refused
from projections.appraisal_queries import appraised_agents
from services.appraisal.appraisals import appraisal_of
from services.appraisal.reads import Scope
from services.console.console import Console
from services.console.page import Page
from services.console.pages.charter import charter_routes
from services.permissions.rules import READ_ALL

PAGE_SIZE = 20
LISTED = "appraisal-agents"  # the name the agents' cursor is sealed under
Text = Annotated[str | None, Query(max_length=512)]


def day(name: str, value: str | None) -> datetime | None:
    """A day of the window (``YYYY-MM-DD``, as a date field sends it) as its first instant in
    UTC; anything else is refused naming the parameter."""
    if not value:
        return None
    try:
        return datetime.combine(date.fromisoformat(value), time(), UTC)
    except ValueError:
        raise Refused(
            f"{name} is a day written YYYY-MM-DD, not {value[:40]!r}", field=name
        ) from None


def signed(valence: dict[str, Any], outcomes: list[Any]) -> dict[str, str]:
    """The two sums as a reader sees them, each on its own and never one net figure (M41:
    ``+1.0`` and ``−2.0``); a side with nothing on it is empty, as the API's ``shown`` leaves
    it out, and nothing at all is shown when nothing was signed."""
    positive, negative = valence["positive"], valence["negative"]
    return {
        "positive": f"+{positive:.1f}" if outcomes and positive else "",
        "negative": f"\u2212{negative:.1f}" if outcomes and negative else "",
    }


def appraisal_routes(console: Console) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    router.include_router(charter_routes(console))
    http = console.http

    @router.get("/appraisal")
    async def appraisal(
        request: Request,
        since: Text = None,
        until: Text = None,
        agent: Text = None,
        before: Text = None,
    ) -> Response:
        visitor = await console.visitor(request, reads=READ_ALL)
        tenant = visitor.principal.tenant_id
        start, end = day("since", since), day("until", until)
        if start is not None and end is not None and start > end:
            raise Refused("since is after until: the window ends before it starts", field="since")
        names = await appraised_agents(
            http.pool, tenant, http.opened_key(LISTED, before or None, visitor.principal), PAGE_SIZE
        )
        now = http.clock()
        rows = []
        for name in names:
            derived, _ = await appraisal_of(http.pool, tenant, Scope(None, name, start, end), now)
            rows.append(shown(name, derived))
        opened = None
        if agent:
            derived, _ = await appraisal_of(http.pool, tenant, Scope(None, agent, start, end), now)
            opened = shown(agent, derived)
        window = {k: v for k, v in (("since", since), ("until", until)) if v}
        last = names[-1] if len(names) == PAGE_SIZE else None
        more = http.sealed_key(LISTED, last, visitor.principal)
        return console.render(
            visitor,
            "appraisal.html",
            current="appraisal",
            rows=rows,
            opened=opened,
            since=since or "",
            until=until or "",
            window=window,
            link=lambda name: "/appraisal?" + urlencode({**window, "agent": name}),
            later=f"/appraisal?{urlencode({**window, 'before': more})}" if more else None,
            first=f"/appraisal?{urlencode(window)}" if before else None,
        )

    return router


def shown(agent: str, derived: dict[str, Any]) -> dict[str, Any]:
    return {
        "agent": agent,
        "label": derived["label"],
        "sums": signed(derived["valence"], derived["outcomes"]),
        "outcomes": derived["outcomes"],
        "counts": derived["counts"],
        "partial": derived["partial"],
        "unreadable": derived["sources"]["unreadableNames"],
    }


APPRAISAL = Page("appraisal", "/appraisal", "Appraisal", READ_ALL, appraisal_routes)
