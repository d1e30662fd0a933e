"""HTTP routes of nights: the list, newest first, and one night with its lines."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends

from contracts.nights import NightList, NightView
from contracts.scalars import Day
from projections.nights import get_night, list_nights
from services.api import Http, MinPosition
from services.auth import Principal
from services.errors import NotFound
from services.problems import READ_ERRORS

READ = "factory.evaluation.read"


def night_routes(http: Http) -> APIRouter:
    router = APIRouter(tags=["nights"])

    @router.get("/factory/evals/nights", response_model=NightList, responses=READ_ERRORS)
    async def nights(
        principal: Annotated[Principal, Depends(http.scope(READ))],
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """Your tenant's nights, newest first: date, status, counts and finishedAt."""
        await http.read_at("nights", min_position, principal)
        found = await list_nights(http.pool, principal.tenant_id)
        return {"items": [http.with_position(night, principal) for night in found]}

    @router.get("/factory/evals/nights/{date}", response_model=NightView, responses=READ_ERRORS)
    async def night(
        date: Day,
        principal: Annotated[Principal, Depends(http.scope(READ))],
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """One night (``yyyy-MM-dd``, UTC) with its inputs, selected cases, note and lines."""
        await http.read_at("nights", min_position, principal)
        found = await get_night(http.pool, principal.tenant_id, date.isoformat())
        if found is None:
            raise NotFound(f"no night {date.isoformat()}", date=date.isoformat())
        return http.with_position(found, principal)

    return router
