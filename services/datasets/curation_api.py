"""Curation routes of a dataset (SPEC C14, C16): a task added by hand, a task taken out of
the next snapshots. Both are a person's work, never a service key's (``person``)."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request

from contracts.dataset_answers import TaskWritten
from contracts.datasets import CurateTask
from contracts.errors import NotPermitted
from services.datasets.commands import AddTask, RemoveTask
from services.datasets.route_parameters import RUN, DatasetIdPath
from services.edge.auth import Principal
from services.edge.bodies import no_body, read_command
from services.edge.http import Http
from services.edge.openapi import body
from services.edge.parameters import command_id
from services.edge.problems import WRITE_ERRORS
from services.permissions.rules import OPERATOR, require
from services.store.artifacts import check_references

CURATE_EXAMPLE = {
    "taskId": "t-1",
    "inputRef": "artifact:sha256:" + "a" * 64,
    "expectedRef": "artifact:sha256:" + "b" * 64,
}


def curation_routes(http: Http) -> APIRouter:
    """Under the datasets router's prefix, ``/factory/evaluation/datasets``."""
    router = APIRouter()

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

    return router


def person(principal: Principal) -> None:
    """Curation and consent are a person's decisions, never a service key's; an Operator's
    (decisions D23), refused before anything is read, as the bus would refuse it."""
    if principal.service:
        raise NotPermitted("a service key cannot curate or share datasets", field="Authorization")
    require(principal.roles, OPERATOR, "curating and sharing datasets")
