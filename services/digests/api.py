"""HTTP routes of weekly digests: ``/factory/feedback/digests`` (SPEC W137), tenant-scoped."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path
from pydantic import AfterValidator

from contracts.digests import DigestList, DigestView
from contracts.errors import NotFound, echoed
from contracts.intake import StandingIssueList, StandingIssueView
from contracts.scalars import WEEK_PATTERN, calendar_week
from projections.digests import get_digest, list_digests
from projections.standing_issues import get_standing_issue, list_standing_issues
from services.edge.auth import Principal
from services.edge.http import Http
from services.edge.parameters import PAGE, Before, Limit, MinPosition
from services.edge.problems import READ_ERRORS

READ = "factory.feedback.read"


def digest_routes(http: Http) -> APIRouter:
    router = APIRouter(prefix="/factory/feedback/digests", tags=["digests"])

    @router.get("", response_model=DigestList, responses=READ_ERRORS)
    async def digests(
        principal: Annotated[Principal, Depends(http.reading(READ))],
        before: Before = None,
        limit: Limit = PAGE,
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """Every week's digest of your tenant, newest week first (W137); a page at a time
        (`limit`, and `before`: the `next` of the previous page)."""
        await http.read_at("digests", min_position, principal)
        found, next_page = await http.keyed_page(
            "digests",
            before,
            principal,
            lambda after: list_digests(http.pool, principal.tenant_id, before=after, limit=limit),
        )
        return {"items": found, "next": next_page}

    @router.get("/{week}", response_model=DigestView, responses=READ_ERRORS)
    async def digest(
        week: Annotated[
            str, Path(pattern=WEEK_PATTERN, examples=["2026-W48"]), AfterValidator(calendar_week)
        ],
        principal: Annotated[Principal, Depends(http.reading(READ))],
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """One week: the tables per agent and per model, and what was posted (W124, W137)."""
        await http.read_at("digests", min_position, principal)
        found = await get_digest(http.pool, principal.tenant_id, week)
        if found is None:
            raise NotFound(f"no digest of {week}", week=week)
        return found

    return router


def standing_issue_routes(http: Http) -> APIRouter:
    """``/factory/feedback/standing-issues``: the triage intake's ledger (SPEC W131–W136)."""
    router = APIRouter(prefix="/factory/feedback/standing-issues", tags=["digests"])

    @router.get("", response_model=StandingIssueList, responses=READ_ERRORS)
    async def standing_issues(
        principal: Annotated[Principal, Depends(http.reading(READ))],
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """Every agent's standing issue: its repository, its issue, the digests taken in (a
        column of their own, W136), the comments made, and a finding where nothing could be
        filed (no repository in the agent register, W134)."""
        await http.read_at("digests", min_position, principal)
        return {"items": await list_standing_issues(http.pool, principal.tenant_id)}

    @router.get("/{agent:name}", response_model=StandingIssueView, responses=READ_ERRORS)
    async def standing_issue(
        agent: Annotated[str, Path(max_length=500)],
        principal: Annotated[Principal, Depends(http.reading(READ))],
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """One agent's standing issue and every weekly item taken into it, newest first."""
        await http.read_at("digests", min_position, principal)
        found = await get_standing_issue(http.pool, principal.tenant_id, agent)
        if found is None:
            raise NotFound(f"no standing issue of agent {echoed(agent)!r}", field="agent")
        return found

    return router
