"""Datasets of evaluation tasks with immutable, versioned snapshots (SPEC C13–C25).

Where a task comes from and where it goes (our decisions; the seed is silent):

- A RunCompleted makes its run a task *candidate* of the dataset ``agent:<agentId>`` of the
  run's tenant (C24): input = the run's ``inputRef``, scoring rule = the run's own or
  ``match-expected``, provenance = run id, agent (and version), completedAt.
- Its expected outcome is the latest correction feedback on the run (``subjectKind`` run,
  ``subjectRef`` = runId, its ``correctedArtifactRef``) or else, for a succeeded run, the run's
  ``outputRef``. A candidate without an expected outcome is not in a snapshot: nothing could
  score an answer to it.
- Validator outcomes (ArtifactValidated, C25) are listed on every task whose run, input or
  expected outcome they name.
- Curated additions and removals come through the API, into any dataset id; a removal takes a
  harvested task (``run:<runId>``) out as well.

A snapshot is the task set serialised canonically (keys sorted, tasks sorted by ``taskId``, no
whitespace, UTF-8) and stored once as a content-addressed artifact of the tenant; the version
record keeps its reference. Tenant datasets are classified ``tenant-confidential``; a copy
shared with another tenant ``anonymised``.
"""

from typing import Annotated
from uuid import UUID

from pydantic import Field, StringConstraints

from contracts.feedback import Contract
from contracts.scalars import Ref

DatasetId = Annotated[
    str, StringConstraints(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9._:@/-]+$")
]
TaskId = Annotated[
    str, StringConstraints(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9._:@/-]+$")
]
TenantId = Annotated[str, StringConstraints(min_length=1, max_length=200)]

HARVESTED_PREFIX = "agent:"  # the dataset a run's task goes to: agent:<agentId>
DEFAULT_SCORING_RULE = "match-expected"
CONFIDENTIAL = "tenant-confidential"
ANONYMISED = "anonymised"


def harvested_dataset(agent_id: str) -> str:
    return f"{HARVESTED_PREFIX}{agent_id}"


def dataset_target(dataset_id: str) -> str:
    """The agent a harvested dataset targets; a named dataset targets what its id says."""
    return dataset_id.removeprefix(HARVESTED_PREFIX)


class CurateTask(Contract):
    """Add a task to a dataset by hand (C14's curated additions)."""

    task_id: TaskId = Field(alias="taskId", description="Unique in the dataset.")
    input_ref: Ref = Field(alias="inputRef")
    expected_ref: Ref = Field(alias="expectedRef", description="The expected outcome.")
    scoring_rule: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = Field(
        default=None, alias="scoringRule"
    )


class SnapshotDataset(Contract):
    """Publish the dataset's next immutable version (C18). ``version``, when given, must be
    the next one: a retry naming a version already published answers it if its content is
    the same and is refused if not (C20)."""

    version: int | None = Field(default=None, ge=1, le=1_000_000)


class RecordShareConsent(Contract):
    """The dataset's tenant consents to share its versions, anonymised, with another (C17)."""

    to_tenant: TenantId = Field(alias="toTenant")


class ShareVersion(Contract):
    """Copy a published version, anonymised, into another tenant that consent was given for."""

    to_tenant: TenantId = Field(alias="toTenant")


class DatasetPublished(Contract):
    """Published on ``evaluation.datasets.v1.dataset-published``: a new immutable version."""

    dataset_key: UUID = Field(
        alias="datasetKey",
        description="The dataset's own id here, from its tenant and datasetId: the Kafka key "
        "and the CloudEvent subject, so one dataset's versions arrive in order.",
    )
    dataset_id: str = Field(alias="datasetId")
    tenant_id: str = Field(alias="tenantId")
    name: str
    version: int
    task_count: int = Field(alias="taskCount")
    snapshot_ref: str = Field(alias="snapshotRef", description="The content-addressed artifact.")
    classification: str
