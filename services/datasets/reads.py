"""Read routes of one dataset beyond the list (``api.py``) and its versions' bytes
(``versions_api.py``): its tasks as a snapshot taken now would hold them, and its consent
and share state (SPEC C14, C17). Both are the datasets read model's, filtered by the caller's
tenant (C16)."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends

from contracts.dataset_answers import DatasetSharing, TaskPage
from projections.datasets import dataset_sharing, task_page
from services.datasets.ids import dataset_key
from services.datasets.route_parameters import READ, READ_MODEL, DatasetIdPath
from services.edge.auth import Principal
from services.edge.http import Http
from services.edge.parameters import PAGE, Before, Limit, MinPosition
from services.edge.problems import READ_ERRORS


def dataset_read_routes(http: Http) -> APIRouter:
    """Under the datasets router's prefix, ``/factory/evaluation/datasets``."""
    router = APIRouter()  # under the datasets router, which names their tag

    @router.get("/{datasetId:path}/tasks", response_model=TaskPage, responses=READ_ERRORS)
    async def tasks(
        dataset_id: DatasetIdPath,
        principal: Annotated[Principal, Depends(http.reading(READ))],
        before: Before = None,
        limit: Limit = PAGE,
        min_position: MinPosition = None,
    ) -> Any:
        """The tasks a snapshot taken now would hold, by taskId, a page at a time (`limit`,
        and `before`: the `next` of the previous page). A dataset the tenant does not have
        has none."""
        await http.read_at(READ_MODEL, min_position, principal)
        found, next_page = await http.keyed_page(
            "dataset-tasks",
            before,
            principal,
            lambda after: task_page(
                http.pool, principal.tenant_id, dataset_id, after=after, limit=limit
            ),
        )
        return {"items": found, "next": next_page}

    @router.get("/{datasetId:path}/sharing", response_model=DatasetSharing, responses=READ_ERRORS)
    async def sharing(
        dataset_id: DatasetIdPath,
        principal: Annotated[Principal, Depends(http.reading(READ))],
        min_position: MinPosition = None,
    ) -> Any:
        """The consents recorded to share the dataset, anonymised, and the versions shared
        with other tenants, each with who and when (C17). Where the tenant's
        MemoryPromotionService decides its shares, no consent is recorded here (decisions
        D56)."""
        await http.read_at(READ_MODEL, min_position, principal)
        key = dataset_key(principal.tenant_id, dataset_id)
        return await dataset_sharing(http.pool, principal.tenant_id, key)

    return router
