"""Taking a snapshot (SPEC C18–C20), shared by the API's route and the console: the task set
as the datasets read model holds it, serialised canonically, and the ``PublishVersion`` that
names its content-addressed artifact."""

from dataclasses import dataclass

from contracts.datasets import dataset_target
from contracts.errors import NotFound
from projections.datasets import dataset_tasks
from services.datasets.commands import PublishVersion
from services.datasets.tasks import snapshot_document
from services.edge.auth import Principal
from services.edge.http import Http
from services.permissions.rules import OPERATOR, require
from services.store.artifacts import artifact_ref


@dataclass(frozen=True)
class Snapshot:
    """The snapshot's bytes, to store before ``publish`` is decided (C53: the artifact a
    version names is there before the version is)."""

    content: bytes
    publish: PublishVersion


async def snapshot_of(
    http: Http,
    principal: Principal,
    dataset_id: str,
    version: int | None = None,
    request_key: str | None = None,
) -> Snapshot:
    """The snapshot the dataset's tasks give now. The role rule is asked before the task set
    is read (decisions D23); a dataset without a task has nothing to publish (404)."""
    require(principal.roles, OPERATOR, "PublishVersion")
    tasks = await dataset_tasks(http.pool, principal.tenant_id, dataset_id)
    if not tasks:
        raise NotFound(f"{dataset_id} has no tasks to publish", datasetId=dataset_id)
    content = snapshot_document(dataset_id, dataset_target(dataset_id), tasks)
    publish = PublishVersion(
        dataset_id=dataset_id,
        snapshot_ref=artifact_ref(content),
        task_count=len(tasks),
        version=version,
        request_key=request_key,
    )
    return Snapshot(content, publish)
