"""The Datasets page: operators see the tenant's datasets a page at a time, open one — its
tasks, its published versions (each snapshot a download), the consents recorded to share it
and the versions shared — and take a snapshot or record a consent through the API's own
commands (``dataset_actions``), so the role rules and stamped fields are the API's (SPEC
C13–C21, C17; decisions D89).

Every read is the visitor's tenant's: another tenant's dataset or version is not found, as
through the API (C16).
"""

import re
import uuid
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from projections.datasets import (
    dataset_sharing,
    get_dataset,
    get_version,
    list_datasets,
    task_page,
)
from services.console.console import Console, Visitor
from services.console.page import Page
from services.console.pages.dataset_actions import checked, dataset_action_routes
from services.datasets.degrading import SNAPSHOT_MEDIA_TYPE
from services.datasets.ids import dataset_key
from services.permissions.rules import OPERATOR, READ_ALL
from services.store.artifacts import get_artifact

# The navigation offers the page to those who look after datasets and to those who watch;
# every role but Requester may read it (the API's read rule, decisions D23).
SHOWN_TO = ("Operator", "Observer", "PlatformAdmin")
PAGE_SIZE = 50
TASKS_SHOWN = 50
Cursor = Annotated[str | None, Query(max_length=512)]


def dataset_path(dataset_id: str) -> str:
    return "/datasets/" + quote(dataset_id, safe=":@/")


def snapshot_name(dataset_id: str, version: int) -> str:
    """A file name for the download: the id with what a file name cannot hold replaced."""
    return f"{re.sub(r'[^A-Za-z0-9._-]', '_', dataset_id)}-v{version}.json"


def datasets_routes(console: Console) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    http = console.http

    @router.get("/datasets")
    async def datasets(request: Request, before: Cursor = None) -> Response:
        visitor = await console.visitor(request, reads=READ_ALL)
        tenant = visitor.principal.tenant_id
        items, older = await http.keyed_page(
            "datasets",
            before or None,
            visitor.principal,
            lambda after: list_page(http.pool, tenant, after),
        )
        return console.render(
            visitor,
            "datasets.html",
            current="datasets",
            items=[{**item, "path": dataset_path(item["datasetId"])} for item in items],
            older=f"/datasets?{urlencode({'before': older})}" if older else None,
            first="/datasets" if before else None,
        )

    @router.get("/datasets/{dataset_id:path}/versions/{version:int}/snapshot")
    async def download(request: Request, dataset_id: str, version: int) -> Response:
        """The version's snapshot, byte for byte as published (C15): the same tenant rule as
        the API's ``GET …/versions/{version}``, served to the session."""
        visitor = await console.visitor(request, reads=READ_ALL)
        tenant = visitor.principal.tenant_id
        found = await get_version(http.pool, tenant, checked(dataset_id), version)
        if found is None:
            what = f"There is no version {version} of dataset {dataset_id}."
            return console.render(visitor, "not_found.html", 404, what=what)
        _media, content = await get_artifact(http.pool, tenant, found["snapshotRef"])
        name = snapshot_name(dataset_id, version)
        return Response(
            content,
            media_type=SNAPSHOT_MEDIA_TYPE,
            headers={
                "Content-Disposition": f'attachment; filename="{name}"',
                "X-Content-Type-Options": "nosniff",
                "Cache-Control": "private, max-age=31536000, immutable",
            },
        )

    @router.get("/datasets/{dataset_id:path}")
    async def dataset(request: Request, dataset_id: str, after: Cursor = None) -> Response:
        visitor = await console.visitor(request, reads=READ_ALL)
        return await shown(visitor, checked(dataset_id), after=after or None)

    async def shown(
        visitor: Visitor,
        dataset_id: str,
        status: int = 200,
        refusal: str | None = None,
        form: dict[str, str] | None = None,
        after: str | None = None,
    ) -> Response:
        """The dataset's page; ``refusal``: why the action just asked for was refused."""
        # Decisions D23, D123: the page after a refused act is read by the page's rule before
        # the dataset is looked up, so a Requester alone is refused alike for any id.
        visitor.must_hold(READ_ALL)
        principal = visitor.principal
        tenant = principal.tenant_id
        found = await get_dataset(http.pool, tenant, dataset_id)
        if found is None:
            return console.render(
                visitor, "not_found.html", 404, what=f"There is no dataset {dataset_id}."
            )
        tasks, more = await http.keyed_page(
            "dataset-tasks",
            after,
            principal,
            lambda start: task_page(http.pool, tenant, dataset_id, after=start, limit=TASKS_SHOWN),
        )
        path = dataset_path(dataset_id)
        sharing = await dataset_sharing(http.pool, tenant, dataset_key(tenant, dataset_id))
        return console.render(
            visitor,
            "dataset.html",
            status,
            current="datasets",
            dataset=found,
            path=path,
            tasks=tasks,
            task_count=found["candidates"],
            more_tasks=f"{path}?{urlencode({'after': more})}" if more else None,
            first_tasks=path if after else None,
            versions=sorted(found["versions"], key=lambda v: -v["version"]),
            sharing=sharing,
            acts=visitor.holds(OPERATOR),
            request_id=str(uuid.uuid4()),
            refusal=refusal,
            form=form or {},
        )

    router.include_router(dataset_action_routes(console, shown))
    return router


async def list_page(pool: Any, tenant: str, after: str | None) -> tuple[list[dict[str, Any]], Any]:
    return await list_datasets(pool, tenant, after=after, limit=PAGE_SIZE)


DATASETS = Page("datasets", "/datasets", "Datasets", SHOWN_TO, datasets_routes)
