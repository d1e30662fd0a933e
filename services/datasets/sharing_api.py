"""Sharing routes of a dataset (SPEC C17, C53): a consent recorded to share it, and a version
copied, anonymised, into another tenant. Consent is the tenant's MemoryPromotionService's
where one is configured, and the one recorded here otherwise (decisions D56)."""

import asyncio
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response

from contracts.dataset_answers import ConsentWritten, VersionShared
from contracts.datasets import RecordShareConsent, ShareVersion
from contracts.errors import NotPermitted
from services.datasets.commands import GrantShareConsent, ShareCopy
from services.datasets.consent import ConsentService, ConsentUnavailable
from services.datasets.curation_api import person
from services.datasets.degrading import (
    ArtifactStoreUnavailable,
    consent_unavailable,
    keep,
    unavailable,
)
from services.datasets.handlers import Published
from services.datasets.ids import shared_dataset_id
from services.datasets.route_parameters import RUN, DatasetIdPath, VersionPath
from services.datasets.tasks import anonymised, artifact_refs_of
from services.datasets.versions_api import load_dataset, published_version
from services.edge.auth import Principal
from services.edge.bodies import read_command
from services.edge.http import Http
from services.edge.json_answers import answer_json
from services.edge.openapi import body
from services.edge.parameters import command_id
from services.edge.problems import WRITE_ERRORS
from services.store.artifacts import artifact_exists, get_artifact
from services.store.event_store import EventStore


def sharing_routes(
    http: Http, events: EventStore, consent_service: Callable[[str], ConsentService | None]
) -> APIRouter:
    """Under the datasets router's prefix, ``/factory/evaluation/datasets``.
    ``consent_service``: as ``dataset_routes`` takes it."""
    router = APIRouter()

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

    return router
