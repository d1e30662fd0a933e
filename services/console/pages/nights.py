"""The Nights page: every night of the tenant, newest first and paged, and one night with what
it was planned with, the cases it selected, its note and a line per case — ran, skipped,
over the cap or failed, with the reason and the score (SPEC W87–W90), and, for a case a
change of its agent put first, what changed (``rerun``, decisions D242). It reads what
``GET /factory/evals/nights[/{date}]`` answers, through the same read model's queries and the
API's sealed cursors.
"""

import re
from datetime import date as Date
from typing import Annotated, Any
from urllib.parse import urlencode
from uuid import UUID

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from contracts.errors import Refused
from projections.eval_cases import case_refs
from projections.nights import get_night, list_nights
from services.console.console import Console
from services.console.page import Page
from services.permissions.rules import READ_ALL

PAGE_SIZE = 30
# A line's outcome (SPEC §3.8: ran|skipped|over-cap|failed) as a reader says it; the reason
# beside it keeps §3.8's own words, which the logs and the API use.
OUTCOMES = {
    "ran": "ran",
    "skipped": "did not run",
    "over-cap": "over the night's cap",
    "failed": "failed",
}


def day(text: str) -> str:
    """A night's date as given in the path: ``yyyy-MM-dd`` only (one night, one address; the
    ISO parser would also take ``20261031`` or ``2026-W44-6``), or a 4xx naming the field."""
    try:
        if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text) is None:
            raise ValueError(text)
        return Date.fromisoformat(text).isoformat()
    except ValueError:
        raise Refused("date is a day the calendar has, yyyy-MM-dd", field="date") from None


def rate(value: float | None) -> str:
    return "—" if value is None else f"{round(value * 100)} %"


def night_lines(night: dict[str, Any], refs: dict[str, str]) -> list[dict[str, Any]]:
    """Each line with the ref of its case and the outcome in words; a reason that only
    repeats the outcome (``over-cap``) is not said twice."""
    return [
        {
            **line,
            "ref": refs.get(line["case"], line["case"]),
            "said": OUTCOMES.get(line["outcome"], line["outcome"]),
            "why": None if line.get("reason") == line["outcome"] else line.get("reason"),
            "looked": rate((line.get("score") or {}).get("lookedRate")),
            "correct": rate((line.get("score") or {}).get("correctRate")),
        }
        for line in night["lines"]
    ]


def nights_routes(console: Console) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    http = console.http

    @router.get("/nights")
    async def nights(
        request: Request, before: Annotated[str | None, Query(max_length=512)] = None
    ) -> Response:
        visitor = await console.visitor(request, reads=READ_ALL)
        principal = visitor.principal
        found, next_page = await http.keyed_page(
            "nights",
            before or None,
            principal,
            lambda after: list_nights(
                http.pool, principal.tenant_id, before=after, limit=PAGE_SIZE
            ),
        )
        return console.render(
            visitor,
            "nights.html",
            current="nights",
            items=found,
            older=f"/nights?{urlencode({'before': next_page})}" if next_page else None,
            first="/nights" if before else None,
        )

    @router.get("/nights/{date}")
    async def night(request: Request, date: str) -> Response:
        visitor = await console.visitor(request, reads=READ_ALL)
        found = await get_night(http.pool, visitor.principal.tenant_id, day(date))
        if found is None:
            return console.render(
                visitor, "not_found.html", 404, what=f"There is no night of {day(date)}."
            )
        # The plan names the cases it selected; the lines of the others (skipped, over the
        # cap) name a case by id only, so their refs are read from the eval cases.
        refs = {selected["case"]: selected["ref"] for selected in found["selected"]}
        unnamed = [UUID(line["case"]) for line in found["lines"] if line["case"] not in refs]
        if unnamed:
            refs |= await case_refs(http.pool, visitor.principal.tenant_id, unnamed)
        return console.render(
            visitor,
            "night.html",
            current="nights",
            night=found,
            lines=night_lines(found, refs),
        )

    return router


# SPEC C52, decisions D23: every role but a Requester reads the tenant's nights.
NIGHTS = Page("nights", "/nights", "Nights", READ_ALL, nights_routes)
