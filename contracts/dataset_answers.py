"""What the HTTP API answers about datasets (SPEC C13–C25): each dataset with its versions,
a version published or shared, its snapshot and tasks, the consents and shares; and what
``POST /factory/events`` answers. The shared pieces (``Answer``, positions, cursors) are
``contracts.answers``'; the examples tell the story of ``contracts/example_story.py``."""

from pydantic import Field, JsonValue
from pydantic.config import JsonDict

from contracts import example_story as examples
from contracts import feedback_examples
from contracts.answers import Answer, Cursor, Position, Timestamp, shown_as
from contracts.datasets import ANONYMISED, CONFIDENTIAL

# What the HTTP API answers (``contracts.answers.Answer``: every field declared, shown with
# an example from the same story as the other answers).
POSITION = feedback_examples.FEEDBACK_WRITTEN["position"]
SNAPSHOT_REF = "artifact:sha256:3f0a1c9e5d7b2a4c6e8f0a1b3c5d7e9f1a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d"
PUBLISHED_AT = "2026-11-30T09:12:41.204518+00:00"
VERSION_1: JsonDict = {
    "version": 1,
    "taskCount": 42,
    "classification": CONFIDENTIAL,
    "snapshotRef": SNAPSHOT_REF,
    "publishedAt": PUBLISHED_AT,
}
DATASET_SUMMARY: JsonDict = {
    "datasetId": "agent:Office/Agent/Coach",
    "name": "agent:Office/Agent/Coach",
    "target": "Office/Agent/Coach",
    "classification": CONFIDENTIAL,
    "candidates": 45,
    "versions": [VERSION_1],
}
DATASET_LIST: JsonDict = {"items": [DATASET_SUMMARY], "next": None}
VERSION_PUBLISHED: JsonDict = {
    "datasetId": "agent:Office/Agent/Coach",
    "tenantId": examples.TENANT,
    "name": "agent:Office/Agent/Coach",
    "target": "Office/Agent/Coach",
    "version": 1,
    "taskCount": 42,
    "snapshotRef": SNAPSHOT_REF,
    "classification": CONFIDENTIAL,
    "publishedAt": PUBLISHED_AT,
    "created": True,
    "position": POSITION,
}
TASK_WRITTEN: JsonDict = {"taskId": "curated-hourly-rate", "position": POSITION}
CONSENT_WRITTEN: JsonDict = {"toTenant": "globex", "position": POSITION}
VERSION_SHARED: JsonDict = {
    "toTenant": "globex",
    "datasetId": "shared:5b0e3f7a9c1d2e4f",
    "version": 1,
    "taskCount": 40,
    "snapshotRef": "artifact:sha256:" + "7c" * 32,
    "classification": ANONYMISED,
}
# An anonymised copy's snapshot (C17): a harvested one adds each task's provenance.
SNAPSHOT_DOCUMENT: JsonDict = {
    "datasetId": "shared:5d41402abc4b2a76b9719d91",
    "target": "shared",
    "tasks": [
        {
            "taskId": "task-0c8a6f2e9b1d4c7a3e5f8b2d",
            "inputRef": "artifact:sha256:" + "a1" * 32,
            "expectedRef": "artifact:sha256:" + "b2" * 32,
            "scoringRule": "match-expected",
            "validations": [{"validator": "schema", "outcome": "passed", "findings": 0}],
        }
    ],
}
TASK_PAGE: JsonDict = {"items": SNAPSHOT_DOCUMENT["tasks"], "next": None}
CONSENT_RECORDED: JsonDict = {"toTenant": "globex", "by": "otto", "at": PUBLISHED_AT}
SHARE_MADE: JsonDict = {"version": 1, "toTenant": "globex", "by": "otto", "at": PUBLISHED_AT}
DATASET_SHARING: JsonDict = {"consents": [CONSENT_RECORDED], "shares": [SHARE_MADE]}


class DatasetVersion(Answer):
    """A published version as the API lists it (C13, C21)."""

    model_config = shown_as(VERSION_1)

    version: int
    task_count: int = Field(alias="taskCount")
    classification: str
    snapshot_ref: str = Field(alias="snapshotRef")
    published_at: Timestamp = Field(alias="publishedAt")


class DatasetSummary(Answer):
    model_config = shown_as(DATASET_SUMMARY)

    dataset_id: str = Field(alias="datasetId")
    name: str
    target: str
    classification: str
    candidates: int = Field(description="Tasks a snapshot taken now would hold.")
    versions: list[DatasetVersion]


class SnapshotDocument(Answer):
    """A published version's snapshot (C15), served byte for byte as canonical JSON (keys
    sorted, no whitespace): the same version answers the same bytes forever."""

    model_config = shown_as(SNAPSHOT_DOCUMENT)

    dataset_id: str = Field(alias="datasetId")
    target: str
    tasks: list[dict[str, JsonValue]] = Field(
        description="The tasks, sorted by taskId: input, expected outcome, scoring rule, "
        "provenance and validations (an anonymised copy keeps less, C17)."
    )


class DatasetList(Answer):
    model_config = shown_as(DATASET_LIST)

    items: list[DatasetSummary]
    next: Cursor


class VersionPublished(Answer):
    """The answer of a snapshot: the version record (C13)."""

    model_config = shown_as(VERSION_PUBLISHED)

    dataset_id: str = Field(alias="datasetId")
    tenant_id: str = Field(alias="tenantId")
    name: str
    target: str
    version: int
    task_count: int = Field(alias="taskCount")
    snapshot_ref: str = Field(alias="snapshotRef")
    classification: str
    published_at: Timestamp = Field(alias="publishedAt")
    created: bool = Field(description="False when the request repeated a published version.")
    position: Position


class TaskWritten(Answer):
    model_config = shown_as(TASK_WRITTEN)

    task_id: str = Field(alias="taskId")
    position: Position


class ConsentWritten(Answer):
    model_config = shown_as(CONSENT_WRITTEN)

    to_tenant: str = Field(alias="toTenant")
    position: Position


class VersionShared(Answer):
    """The anonymised copy, as a version of a dataset of the other tenant (C17)."""

    model_config = shown_as(VERSION_SHARED)

    to_tenant: str = Field(alias="toTenant")
    dataset_id: str = Field(alias="datasetId")
    version: int
    task_count: int = Field(alias="taskCount")
    snapshot_ref: str = Field(alias="snapshotRef")
    classification: str


class TaskPage(Answer):
    """A dataset's tasks as a snapshot taken now would hold them, by taskId, a page at a time
    (C14, C24, C25)."""

    model_config = shown_as(TASK_PAGE)

    items: list[dict[str, JsonValue]] = Field(
        description="Each task: input, expected outcome and where it came from, scoring rule, "
        "provenance and validations, as in a snapshot."
    )
    next: Cursor


class ConsentRecorded(Answer):
    model_config = shown_as(CONSENT_RECORDED)

    to_tenant: str = Field(alias="toTenant")
    by: str
    at: Timestamp


class ShareMade(Answer):
    model_config = shown_as(SHARE_MADE)

    version: int
    to_tenant: str = Field(alias="toTenant")
    by: str
    at: Timestamp


class DatasetSharing(Answer):
    """The consents recorded to share a dataset and the versions shared, oldest first (C17).
    A tenant whose MemoryPromotionService decides its shares records no consent here
    (decisions D56)."""

    model_config = shown_as(DATASET_SHARING)

    consents: list[ConsentRecorded]
    shares: list[ShareMade]
