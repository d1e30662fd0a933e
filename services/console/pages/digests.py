"""The Digests page: the ISO weeks that have a digest, newest first and paged, and one week's
digest — its table per agent (counts by kind, models, the trend drawn as a sparkline, the cases
lifted, the health line of the eval cases) and per model, and what was posted where: the
routes, each agent's post and its delivery, and the standing issue the triage intake took it
into (SPEC W115–W124, W131–W137; decisions D53). It reads what
``GET /factory/feedback/digests[/{week}]`` and ``…/standing-issues[/{agent}]`` answer, through
the same read models' queries and the API's sealed cursors.
"""

import re
from datetime import date, timedelta
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from contracts.errors import Refused
from contracts.scalars import WEEK_PATTERN, calendar_week
from projections.digests import get_digest, list_digests, weekly_totals
from projections.standing_issues import get_standing_issue, list_standing_issues
from services.console.console import Console
from services.console.page import Page
from services.console.pages.sparkline import sparkline
from services.permissions.rules import READ_ALL

PAGE_SIZE = 30
# The trend shows as many weeks as a post spells out of the agent's past (W130: twelve).
TREND_WEEKS = 12


def week_of(text: str) -> str:
    """An ISO week as given in the path (``2026-W48``), or a 4xx naming the field."""
    try:
        if re.fullmatch(WEEK_PATTERN, text) is None:
            raise ValueError(text)
        return calendar_week(text)
    except ValueError:
        raise Refused("week is an ISO week the calendar has, YYYY-Www", field="week") from None


def week_before(week: str) -> str:
    year, number = week.split("-W")
    monday = date.fromisocalendar(int(year), int(number), 1) - timedelta(days=7)
    iso = monday.isocalendar()
    return f"{iso.year}-W{iso.week:02d}"


def trend_points(
    agent: dict[str, Any], week: str, totals: list[tuple[str, dict[str, int]]]
) -> list[tuple[str, int]]:
    """An agent's reports a week over the digests up to ``week`` (an agent a digest does not
    name had none that week, W116); the week before, when no digest was built for it, from
    the digest's own trend (W118), which counted it."""
    points = [(name, counted.get(agent["agent"], 0)) for name, counted in totals]
    before = week_before(week)
    if before not in {name for name, _ in points}:
        at = len(points) - 1 if points and points[-1][0] == week else len(points)
        points.insert(at, (before, agent["trend"]["previous"]))
    return points[-TREND_WEEKS:]


def signed(change: int) -> str:
    return f"+{change}" if change > 0 else ("±0" if change == 0 else f"−{-change}")


def digests_routes(console: Console) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    http = console.http

    @router.get("/digests")
    async def digests(
        request: Request, before: Annotated[str | None, Query(max_length=512)] = None
    ) -> Response:
        visitor = await console.visitor(request, reads=READ_ALL)
        principal = visitor.principal
        found, next_page = await http.keyed_page(
            "digests",
            before or None,
            principal,
            lambda after: list_digests(
                http.pool, principal.tenant_id, before=after, limit=PAGE_SIZE
            ),
        )
        return console.render(
            visitor,
            "digests.html",
            current="digests",
            items=found,
            older=f"/digests?{urlencode({'before': next_page})}" if next_page else None,
            first="/digests" if before else None,
        )

    @router.get("/digests/{week}")
    async def digest(request: Request, week: str) -> Response:
        visitor = await console.visitor(request, reads=READ_ALL)
        tenant = visitor.principal.tenant_id
        found = await get_digest(http.pool, tenant, week_of(week))
        if found is None:
            return console.render(
                visitor, "not_found.html", 404, what=f"There is no digest of {week}."
            )
        totals = await weekly_totals(http.pool, tenant, week, weeks=TREND_WEEKS)
        agents = [
            {
                **agent,
                "change": signed(agent["trend"]["change"]),
                "sparkline": sparkline(
                    trend_points(agent, week, totals), f"Reports a week of {agent['agent']}"
                ),
            }
            for agent in found["tables"]["agents"]
        ]
        return console.render(
            visitor,
            "digest.html",
            current="digests",
            digest=found,
            agents=agents,
            posts=await posts(tenant, found),
        )

    async def posts(tenant: str, digest: dict[str, Any]) -> list[dict[str, Any]]:
        """Per agent of the digest: its post's identity, its delivery to the webhook, and the
        standing issue its week went into (or why it went nowhere, W134)."""
        standing = {s["agent"]: s for s in await list_standing_issues(http.pool, tenant)}
        posted = digest["posted"]
        made = []
        for agent in digest["tables"]["agents"]:
            path = f"_Digests/{digest['week']}/{agent['agentId']}"
            item = None
            if agent["agent"] in standing:
                ledger = await get_standing_issue(http.pool, tenant, agent["agent"])
                items = ledger["items"] if ledger else []
                item = next((i for i in items if i["week"] == digest["week"]), None)
            made.append(
                {
                    "agent": agent["agent"],
                    "identity": path if path in posted["identities"] else None,
                    "delivery": posted["deliveries"].get(agent["agentId"]),
                    "standing": standing.get(agent["agent"]),
                    "item": item,
                }
            )
        return made

    return router


# SPEC C52, decisions D23: every role but a Requester reads the tenant's digests.
DIGESTS = Page("digests", "/digests", "Digests", READ_ALL, digests_routes)
