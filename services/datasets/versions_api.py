"""Version routes of a dataset (SPEC C15, C18–C20): the next version published from a
snapshot of its tasks, a version's snapshot served byte for byte, and any change to a
published version refused. A version is read from the dataset itself (``published_version``):
no read model lags behind it."""

import asyncio
from typing import Annotated, Any

from eventsourcing.application import AggregateNotFoundError
from fastapi import APIRouter, Depends, Request, Response

from contracts.dataset_answers import SnapshotDocument, VersionPublished
from contracts.datasets import SnapshotDataset
from contracts.errors import NotFound
from services.bus.issued import Issued
from services.datasets.degrading import (
    SNAPSHOT_MEDIA_TYPE,
    ArtifactStoreUnavailable,
    keep,
    unavailable,
)
from services.datasets.domain import Dataset
from services.datasets.handlers import Published, publishes
from services.datasets.ids import dataset_key
from services.datasets.route_parameters import READ, READ_MODEL, RUN, DatasetIdPath, VersionPath
from services.datasets.snapshots import snapshot_of
from services.datasets.versions import immutable
from services.edge.auth import Principal
from services.edge.bodies import read_command
from services.edge.http import Http
from services.edge.json_answers import answer_json
from services.edge.openapi import body
from services.edge.parameters import IdempotencyKey, MinPosition, command_id
from services.edge.problems import READ_ERRORS, WRITE_ERRORS
from services.permissions.rules import OPERATOR, require
from services.store.artifacts import get_artifact
from services.store.event_store import EventStore

# A version's snapshot, served byte for byte as the JSON it is: declared by its model, so a
# generated client reads its body.
SNAPSHOT_ANSWER = {"model": SnapshotDocument, "description": "The snapshot, as published"}


def version_routes(http: Http, events: EventStore) -> APIRouter:
    """Under the datasets router's prefix, ``/factory/evaluation/datasets``."""
    router = APIRouter()

    @router.post("/{datasetId:path}/snapshot", status_code=201, response_model=VersionPublished,
                 responses={200: {"model": VersionPublished, "description": "A replay"},
                            503: {"description": "The artifact store failed; nothing "
                                  "published (C53)"},
                            **WRITE_ERRORS},
                 openapi_extra=body(SnapshotDataset, {"version": 1}))  # fmt: skip
    async def snapshot(
        request: Request,
        dataset_id: DatasetIdPath,
        principal: Annotated[Principal, Depends(http.scope(RUN))],
        idempotency_key: IdempotencyKey = None,
        min_position: MinPosition = None,
    ) -> Response:
        """SnapshotDataset (C18–C20): publish the next immutable version of the task set.

        The tasks are serialised canonically and stored once as a content-addressed
        artifact; the version keeps its reference. The task set is what the datasets read
        model holds: ``minPosition`` (a position a write answered: a curation, a correction,
        an event posted to ``/factory/events``) waits until it holds that write.

        The same ``Idempotency-Key``, or a ``version`` already published with the same
        content, answers that version (200); a published version with other content is
        refused (409, ``version-immutable``)."""
        # The role rule before the body is read (decisions D23).
        require(principal.roles, OPERATOR, "PublishVersion")
        raw = await request.body()
        command = SnapshotDataset()
        if raw.strip():
            command = await read_command(request, SnapshotDataset, frozenset())
        await http.read_at(READ_MODEL, min_position, principal)
        key = None if idempotency_key is None else f"{principal.subject}/{idempotency_key}"
        snapshot = await snapshot_of(http, principal, dataset_id, command.version, key)
        content, publish = snapshot.content, snapshot.publish
        # Decided before the artifact is stored: a request refused (409) stores nothing, and a
        # replay stores nothing new (its version's artifact is there already).
        trial = Issued(publish, principal.tenant_id, principal.subject, "trial", http.clock(),
                       roles=principal.roles)  # fmt: skip
        if await asyncio.to_thread(publishes, events, trial):
            try:
                await keep(http, principal.tenant_id, content)
            except ArtifactStoreUnavailable as exc:
                return unavailable(exc)
        outcome = await http.execute(publish, principal, command_id(None))
        published: Published = outcome.result
        answer = {
            **version_record(published),
            "position": http.position(outcome, principal),
        }
        status = 201 if published.created else 200
        return Response(answer_json(answer), status_code=status, media_type="application/json")

    @router.get("/{datasetId:path}/versions/{version}",
                responses={200: SNAPSHOT_ANSWER, **READ_ERRORS})  # fmt: skip
    async def version_content(
        dataset_id: DatasetIdPath,
        version: VersionPath,
        principal: Annotated[Principal, Depends(http.reading(READ))],
    ) -> Response:
        """The version's snapshot, byte for byte as it was published, forever (C15)."""
        found = await published_version(events, principal, dataset_id, version)
        _media, content = await get_artifact(http.pool, principal.tenant_id, found["snapshotRef"])
        return Response(
            content,
            media_type=SNAPSHOT_MEDIA_TYPE,
            headers={
                "ETag": f'"{found["snapshotRef"]}"',
                "Cache-Control": "private, max-age=31536000, immutable",
                "X-Content-Type-Options": "nosniff",
                "X-Dataset-Version": str(version),
                "X-Task-Count": str(found["taskCount"]),
            },
        )

    async def refuse_change(
        dataset_id: DatasetIdPath,
        version: VersionPath,
        principal: Annotated[Principal, Depends(http.scope(RUN))],
    ) -> Response:
        """A published version never changes (C15): any attempt is refused, 409."""
        await published_version(events, principal, dataset_id, version)
        raise immutable(dataset_id, version)

    for method in ("PUT", "PATCH", "DELETE"):
        router.add_api_route(
            "/{datasetId:path}/versions/{version}", refuse_change, methods=[method],
            status_code=409, responses=WRITE_ERRORS, name=f"{method.lower()}_version",
            summary=f"{method} of a published version: refused (C15)",
        )  # fmt: skip

    return router


async def published_version(
    events: EventStore, principal: Principal, dataset_id: str, version: int
) -> dict[str, Any]:
    """The version record, from the dataset itself (no read model lags behind it)."""
    dataset = await asyncio.to_thread(load_dataset, events, principal.tenant_id, dataset_id)
    found = dataset.versions.get(version)
    if found is None:
        raise NotFound(f"no version {version} of {dataset_id}", datasetId=dataset_id)
    return {"snapshotRef": found.snapshot_ref, "taskCount": found.task_count}


def load_dataset(events: EventStore, tenant_id: str, dataset_id: str) -> Dataset:
    try:
        dataset: Dataset = events.repository.get(dataset_key(tenant_id, dataset_id))
    except AggregateNotFoundError:
        raise NotFound(f"no dataset {dataset_id}", datasetId=dataset_id) from None
    return dataset


def version_record(published: Published) -> dict[str, Any]:
    dataset, version = published.dataset, published.version
    return {
        "datasetId": dataset.dataset_id,
        "tenantId": dataset.tenant_id,
        "name": dataset.name,
        "target": dataset.target,
        "version": version.version,
        "taskCount": version.task_count,
        "snapshotRef": version.snapshot_ref,
        "classification": version.classification,
        "publishedAt": version.published_at.isoformat(),
        "created": published.created,
    }
