"""HTTP routes of weekly digests: ``/factory/feedback/digests`` (SPEC W137), tenant-scoped."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path
from pydantic import AfterValidator

from contracts.digests import DigestList, DigestView
from contracts.errors import NotFound
from contracts.scalars import WEEK_PATTERN, calendar_week
from projections.digests import get_digest, list_digests
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
