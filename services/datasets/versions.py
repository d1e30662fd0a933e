"""A dataset's published versions (SPEC C15): the record of one, and the one refusal of any
change to it."""

from dataclasses import dataclass
from datetime import datetime

from contracts.errors import Conflict


@dataclass(frozen=True)
class Version:
    version: int
    snapshot_ref: str
    task_count: int
    classification: str
    published_at: datetime
    request_key: str | None


def immutable(dataset_id: str, version: int) -> Conflict:
    """SPEC C15: the one refusal of any change to a published version."""
    return Conflict(
        f"version {version} of {dataset_id} is published and never changes",
        reason="version-immutable",
        datasetId=dataset_id,
        version=version,
    )
