"""HTTP routes of datasets: ``/factory/evaluation/datasets`` (SPEC C13–C21, C17, C53).

Every read and write is the caller's tenant's (C16, C51): another tenant's dataset answers
404, exactly as one that does not exist.

This router serves the list and includes, in this order (a ``{datasetId:path}`` matches the
first route that fits): curation (``curation_api.py``), versions (``versions_api.py``),
sharing (``sharing_api.py``), and the reads of one dataset (``reads.py``).
"""

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends

from contracts.dataset_answers import DatasetList
from projections.datasets import list_datasets
from services.datasets.consent import ConsentService
from services.datasets.curation_api import curation_routes
from services.datasets.reads import dataset_read_routes
from services.datasets.route_parameters import READ, READ_MODEL
from services.datasets.sharing_api import sharing_routes
from services.datasets.versions_api import version_routes
from services.edge.auth import Principal
from services.edge.http import Http
from services.edge.parameters import PAGE, Before, Limit, MinPosition
from services.edge.problems import READ_ERRORS
from services.store.event_store import EventStore


def no_consent_service(tenant_id: str) -> ConsentService | None:
    return None


def dataset_routes(
    http: Http,
    events: EventStore,
    consent_service: Callable[[str], ConsentService | None] = no_consent_service,
) -> APIRouter:
    """``consent_service``: the tenant's MemoryPromotionService as configured now, or None
    where consent is recorded locally (C17, decisions D56)."""
    router = APIRouter(prefix="/factory/evaluation/datasets", tags=["datasets"])

    @router.get("", response_model=DatasetList, responses=READ_ERRORS)
    async def datasets(
        principal: Annotated[Principal, Depends(http.reading(READ))],
        before: Before = None,
        limit: Limit = PAGE,
        min_position: MinPosition = None,
    ) -> Any:
        """The tenant's datasets with their versions, task counts and classification (C21),
        by id; a page at a time (`limit`, and `before`: the `next` of the previous page)."""
        await http.read_at(READ_MODEL, min_position, principal)
        found, next_page = await http.keyed_page(
            "datasets",
            before,
            principal,
            lambda after: list_datasets(http.pool, principal.tenant_id, after=after, limit=limit),
        )
        return {"items": found, "next": next_page}

    router.include_router(curation_routes(http))
    router.include_router(version_routes(http, events))
    router.include_router(sharing_routes(http, events, consent_service))
    router.include_router(dataset_read_routes(http))
    return router
