"""The datasets context's commands as the bus receives them from our own routes: the path's
dataset id with the body, and what the route found (a stored snapshot's reference)."""

from pydantic import BaseModel, ConfigDict

from contracts.datasets import CurateTask


class Internal(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AddTask(Internal):
    dataset_id: str
    task: CurateTask


class RemoveTask(Internal):
    dataset_id: str
    task_id: str


class PublishVersion(Internal):
    """SnapshotDataset once its content is stored (C18, C20)."""

    dataset_id: str
    snapshot_ref: str
    task_count: int
    version: int | None
    request_key: str | None


class GrantShareConsent(Internal):
    dataset_id: str
    to_tenant: str


class ShareCopy(Internal):
    """Publish an anonymised copy of a version in another tenant (C17). ``service_consent``:
    the tenant's MemoryPromotionService granted it (decisions D56), so no local consent is
    looked for."""

    dataset_id: str
    version: int
    to_tenant: str
    snapshot_ref: str
    task_count: int
    service_consent: bool = False
