"""HTTP routes of nights: the list, newest first, and one night with its lines."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends

from contracts.errors import NotFound
from contracts.nights import NightList, NightView
from contracts.scalars import Day
from projections.nights import get_night, list_nights
from services.edge.auth import Principal
from services.edge.http import Http
from services.edge.parameters import PAGE, Before, Limit, MinPosition
from services.edge.problems import READ_ERRORS

READ = "factory.evaluation.read"


def night_routes(http: Http) -> APIRouter:
    router = APIRouter(tags=["nights"])

    @router.get("/factory/evals/nights", response_model=NightList, responses=READ_ERRORS)
    async def nights(
        principal: Annotated[Principal, Depends(http.reading(READ))],
        before: Before = None,
        limit: Limit = PAGE,
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """Your tenant's nights, newest first: date, status, counts and finishedAt; a page
        at a time (`limit`, and `before`: the `next` of the previous page)."""
        await http.read_at("nights", min_position, principal)
        found, next_page = await http.keyed_page(
            "nights",
            before,
            principal,
            lambda after: list_nights(http.pool, principal.tenant_id, before=after, limit=limit),
        )
        return {
            "items": [http.with_position(night, principal) for night in found],
            "next": next_page,
        }

    @router.get("/factory/evals/nights/{date}", response_model=NightView, responses=READ_ERRORS)
    async def night(
        date: Day,
        principal: Annotated[Principal, Depends(http.reading(READ))],
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """One night (``yyyy-MM-dd``, UTC) with its inputs, selected cases, note and lines."""
        await http.read_at("nights", min_position, principal)
        found = await get_night(http.pool, principal.tenant_id, date.isoformat())
        if found is None:
            raise NotFound(f"no night {date.isoformat()}", date=date.isoformat())
        return http.with_position(found, principal)

    return router
