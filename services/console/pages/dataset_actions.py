"""What an Operator does on the Datasets page: take a snapshot (SPEC C18–C20) and record a
consent to share (C17), each the API's own command through ``Http.execute``, so the role rule
(Operator, decisions D23) and who is recorded are decided as for the API; a refusal comes back
on the dataset's page as a sentence with its status (decisions D62)."""

import re
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import ValidationError

from contracts.datasets import RecordShareConsent
from contracts.errors import DomainError, Refused
from services.console.console import Console, Visitor
from services.datasets.commands import GrantShareConsent
from services.datasets.curation_api import person
from services.datasets.degrading import ArtifactStoreUnavailable, keep
from services.datasets.snapshots import snapshot_of
from services.edge.problems import status_of

Shown = Callable[..., Awaitable[Response]]
READ_MODEL = "datasets"
# As contracts.datasets.DatasetId: an id the API would refuse is refused here too.
DATASET_ID = re.compile(r"^[A-Za-z0-9._:@/-]{1,200}$")


def checked(dataset_id: str) -> str:
    if not DATASET_ID.match(dataset_id):
        raise Refused("datasetId is 1–200 of A–Z, a–z, 0–9 and . _ : @ / -", field="datasetId")
    return dataset_id


def fields(form: Any) -> dict[str, str]:
    return {name: value for name, value in form.items() if isinstance(value, str)}


def dataset_action_routes(console: Console, shown: Shown) -> APIRouter:
    """``shown``: the dataset's page, with a refusal and the form as it was sent."""
    router = APIRouter(include_in_schema=False)
    http = console.http

    @router.post("/datasets/{dataset_id:path}/snapshot")
    async def snapshot(request: Request, dataset_id: str) -> Response:
        """A new version of the task set as it stands. The form carries an id made when the
        page was rendered, the request's Idempotency-Key in the API's terms: sending the same
        form twice publishes one version (C20)."""
        visitor = await console.writer(request)
        dataset_id = checked(dataset_id)
        form = fields(await request.form())
        principal = visitor.principal
        request_id = form.get("request", "").strip()[:100] or None
        key = None if request_id is None else f"{principal.subject}/console-{request_id}"
        try:
            taken = await snapshot_of(http, principal, dataset_id, None, key)
            # C53: the artifact is stored before the version that names it is appended.
            await keep(http, principal.tenant_id, taken.content)
            outcome = await http.execute(taken.publish, principal, str(uuid.uuid4()))
        except DomainError as error:
            return await shown(visitor, dataset_id, status_of(error), error.message, form)
        except ArtifactStoreUnavailable as error:
            sentence = f"The snapshot was not published: the artifact store failed ({error})."
            return await shown(visitor, dataset_id, 503, sentence, form)
        return await done(request, visitor, dataset_id, http.position(outcome, principal))

    @router.post("/datasets/{dataset_id:path}/consents")
    async def consent(request: Request, dataset_id: str) -> Response:
        """Record the tenant's consent to share the dataset, anonymised, with another (C17);
        a share reads it where the tenant has no MemoryPromotionService (decisions D56)."""
        visitor = await console.writer(request)
        dataset_id = checked(dataset_id)
        form = fields(await request.form())
        principal = visitor.principal
        try:
            person(principal)
            given = RecordShareConsent.model_validate(
                {"toTenant": form.get("toTenant", "").strip()}
            )
            outcome = await http.execute(
                GrantShareConsent(dataset_id=dataset_id, to_tenant=given.to_tenant),
                principal,
                str(uuid.uuid4()),
            )
        except ValidationError as error:
            problem = error.errors()[0]
            sentence = f"toTenant: {problem['msg']}"
            return await shown(visitor, dataset_id, 422, sentence, form)
        except DomainError as error:
            return await shown(visitor, dataset_id, status_of(error), error.message, form)
        return await done(request, visitor, dataset_id, http.position(outcome, principal))

    async def done(request: Request, visitor: Visitor, dataset_id: str, position: str) -> Response:
        # Read-your-writes: the page shown next holds what was just decided.
        await http.read_at(READ_MODEL, position, visitor.principal)
        return console.see_other(request, f"/datasets/{dataset_id}", visitor)

    return router
