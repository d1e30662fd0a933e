"""HTTP routes of datasets: ``/factory/evaluation/datasets`` (SPEC C13–C21, C17, C53).

Every read and write is the caller's tenant's (C16, C51): another tenant's dataset answers
404, exactly as one that does not exist.
"""

import asyncio
from collections.abc import Callable
from typing import Annotated, Any

from eventsourcing.application import AggregateNotFoundError
from fastapi import APIRouter, Depends, Path, Request, Response
from pydantic import BeforeValidator

from contracts.datasets import (
    ConsentWritten,
    CurateTask,
    DatasetId,
    DatasetList,
    RecordShareConsent,
    ShareVersion,
    SnapshotDataset,
    SnapshotDocument,
    TaskWritten,
    VersionPublished,
    VersionShared,
)
from contracts.errors import NotFound, NotPermitted
from contracts.scalars import DatasetVersion, canonical_number
from projections.datasets import list_datasets
from services.bus.issued import Issued
from services.datasets.commands import (
    AddTask,
    GrantShareConsent,
    RemoveTask,
    ShareCopy,
)
from services.datasets.consent import ConsentService, ConsentUnavailable
from services.datasets.degrading import (
    SNAPSHOT_MEDIA_TYPE,
    ArtifactStoreUnavailable,
    consent_unavailable,
    keep,
    unavailable,
)
from services.datasets.domain import (
    Dataset,
    dataset_key,
    immutable,
    shared_dataset_id,
)
from services.datasets.handlers import Published, publishes
from services.datasets.reads import dataset_read_routes
from services.datasets.snapshots import snapshot_of
from services.datasets.tasks import anonymised, artifact_refs_of
from services.edge.auth import Principal
from services.edge.bodies import no_body, read_command
from services.edge.http import Http
from services.edge.json_answers import answer_json
from services.edge.openapi import body
from services.edge.parameters import PAGE, Before, IdempotencyKey, Limit, MinPosition, command_id
from services.edge.problems import READ_ERRORS, WRITE_ERRORS
from services.permissions.rules import OPERATOR, require
from services.store.artifacts import (
    artifact_exists,
    check_references,
    get_artifact,
)
from services.store.event_store import EventStore

READ, RUN = "factory.evaluation.read", "factory.evaluation.run"
READ_MODEL = "datasets"
DatasetIdPath = Annotated[DatasetId, Path(alias="datasetId")]
CURATE_EXAMPLE = {
    "taskId": "t-1",
    "inputRef": "artifact:sha256:" + "a" * 64,
    "expectedRef": "artifact:sha256:" + "b" * 64,
}
# A version's snapshot, served byte for byte as the JSON it is: declared by its model, so a
# generated client reads its body.
SNAPSHOT_ANSWER = {"model": SnapshotDocument, "description": "The snapshot, as published"}
# A version in ASCII digits, written one way (as ``contracts.scalars.PathNumber``).
VersionPath = Annotated[DatasetVersion, BeforeValidator(canonical_number), Path()]


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

    @router.post("/{datasetId:path}/tasks", status_code=201, response_model=TaskWritten,
                 responses=WRITE_ERRORS,
                 openapi_extra=body(CurateTask, CURATE_EXAMPLE))  # fmt: skip
    async def curate(
        request: Request,
        dataset_id: DatasetIdPath,
        principal: Annotated[Principal, Depends(http.scope(RUN))],
    ) -> dict[str, Any]:
        """Add a task by hand (C14); a person's work, not a service's."""
        person(principal)
        task = await read_command(request, CurateTask, frozenset({"curatedBy"}))
        # A reference in our scheme names an artifact of this tenant, as feedback's do (C06).
        refs = {"inputRef": task.input_ref, "expectedRef": task.expected_ref}
        await check_references(http.pool, principal.tenant_id, dict(refs))
        outcome = await http.execute(AddTask(dataset_id=dataset_id, task=task), principal,
                                     command_id(None))  # fmt: skip
        return {"taskId": task.task_id, "position": http.position(outcome, principal)}

    @router.delete("/{datasetId:path}/tasks/{taskId:path}", response_model=TaskWritten,
                   responses=WRITE_ERRORS)  # fmt: skip
    async def remove(
        request: Request,
        dataset_id: DatasetIdPath,
        task_id: Annotated[str, Path(alias="taskId", min_length=1, max_length=200)],
        principal: Annotated[Principal, Depends(http.scope(RUN))],
    ) -> dict[str, Any]:
        """Take a task out of the dataset's next snapshots (a harvested one: ``run:<runId>``);
        published versions keep it. A task the dataset does not hold, or a dataset the tenant
        does not have, is 404 (C16). Takes no body."""
        person(principal)
        await no_body(request)
        outcome = await http.execute(
            RemoveTask(dataset_id=dataset_id, task_id=task_id), principal, command_id(None)
        )
        return {"taskId": task_id, "position": http.position(outcome, principal)}

    @router.post("/{datasetId:path}/snapshot", status_code=201, response_model=VersionPublished,
                 responses={200: {"model": VersionPublished, "description": "A replay"},
                            503: {"description": "The artifact store failed, or the consent "
                                  "service could not answer; nothing shared (C53)"},
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

    @router.post("/{datasetId:path}/consents", status_code=201, response_model=ConsentWritten,
                 responses=WRITE_ERRORS,
                 openapi_extra=body(RecordShareConsent, {"toTenant": "tenant-b"}))  # fmt: skip
    async def consent(
        request: Request,
        dataset_id: DatasetIdPath,
        principal: Annotated[Principal, Depends(http.scope(RUN))],
    ) -> dict[str, Any]:
        """Record this tenant's consent to share the dataset, anonymised, with another (C17).
        It is used only where the tenant has no MemoryPromotionService configured: one that
        is configured decides every share alone (decisions D56)."""
        person(principal)
        command = await read_command(request, RecordShareConsent, frozenset())
        outcome = await http.execute(
            GrantShareConsent(dataset_id=dataset_id, to_tenant=command.to_tenant), principal,
            command_id(None),
        )  # fmt: skip
        return {"toTenant": command.to_tenant, "position": http.position(outcome, principal)}

    @router.post("/{datasetId:path}/versions/{version}/shares", status_code=201,
                 response_model=VersionShared,
                 responses={200: {"model": VersionShared, "description": "A replay"},
                            503: {"description": "The artifact store failed, or the consent "
                                  "service could not answer; nothing shared (C53)"},
                            **WRITE_ERRORS},
                 openapi_extra=body(ShareVersion, {"toTenant": "tenant-b"}))  # fmt: skip
    async def share(
        request: Request,
        dataset_id: DatasetIdPath,
        version: VersionPath,
        principal: Annotated[Principal, Depends(http.scope(RUN))],
    ) -> Response:
        """Copy a version, anonymised, into another tenant (C17). Consent comes from the
        tenant's MemoryPromotionService where one is configured: it refuses → 403
        (``consent-refused``, with its reason); it cannot answer → 503
        (``consent-service-unavailable``, with why), nothing shared (C53). Without one, a
        consent recorded here is needed (403, ``consent-required``). The copy is a version of
        a dataset of its own there (``shared:<opaque id>``), classified ``anonymised``."""
        person(principal)
        command = await read_command(request, ShareVersion, frozenset())
        found = await published_version(events, principal, dataset_id, version)
        source = await asyncio.to_thread(load_dataset, events, principal.tenant_id, dataset_id)
        service = consent_service(principal.tenant_id)
        # before anything is copied: the dataset's own rules, then the consent
        source.check_share(version, command.to_tenant, local_consent=service is None)
        if service is not None:
            try:
                consent = await service.check(
                    tenant_id=principal.tenant_id, dataset_id=dataset_id, version=version,
                    to_tenant=command.to_tenant,
                )  # fmt: skip
            except ConsentUnavailable as exc:
                return consent_unavailable(exc)
            if not consent.granted:
                raise NotPermitted(
                    f"the memory service refused to share {dataset_id} with "
                    f"{command.to_tenant}: {consent.reason or 'no reason given'}",
                    field="toTenant", reason="consent-refused", cause=consent.reason,
                )  # fmt: skip
        _media, content = await get_artifact(http.pool, principal.tenant_id, found["snapshotRef"])
        copy_id = shared_dataset_id(principal.tenant_id, dataset_id)
        present = {
            ref
            for ref in artifact_refs_of(content)
            if await artifact_exists(http.pool, principal.tenant_id, ref)
        }
        document, refs, count = anonymised(content, copy_id, present)
        try:
            for ref in refs:
                media, data = await get_artifact(http.pool, principal.tenant_id, ref)
                await keep(http, command.to_tenant, data, media)
            ref = await keep(http, command.to_tenant, document)
        except ArtifactStoreUnavailable as exc:
            return unavailable(exc)
        outcome = await http.execute(
            ShareCopy(dataset_id=dataset_id, version=version, to_tenant=command.to_tenant,
                      snapshot_ref=ref, task_count=count, service_consent=service is not None),
            principal, command_id(None),
        )  # fmt: skip
        published: Published = outcome.result
        answer = {
            "toTenant": command.to_tenant,
            "datasetId": published.dataset.dataset_id,
            "version": published.version.version,
            "taskCount": published.version.task_count,
            "snapshotRef": published.version.snapshot_ref,
            "classification": published.version.classification,
        }
        status = 201 if published.created else 200
        return Response(answer_json(answer), status_code=status, media_type="application/json")

    router.include_router(dataset_read_routes(http))
    return router


def person(principal: Principal) -> None:
    """Curation and consent are a person's decisions, never a service key's; an Operator's
    (decisions D23), refused before anything is read, as the bus would refuse it."""
    if principal.service:
        raise NotPermitted("a service key cannot curate or share datasets", field="Authorization")
    require(principal.roles, OPERATOR, "curating and sharing datasets")


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
