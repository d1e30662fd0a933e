"""Which datasets events leave the service: DatasetPublished (SPEC C18, C23)."""

from typing import Any

from contracts import topics
from contracts.datasets import DatasetPublished
from services.datasets.domain import Dataset
from services.kafka.publication import Publication


def dataset_published(event: Any) -> DatasetPublished:
    return DatasetPublished(
        dataset_key=event.originator_id,
        dataset_id=event.dataset_id,
        tenant_id=event.tenant_id,
        name=event.name,
        version=event.version,
        task_count=event.task_count,
        snapshot_ref=event.snapshot_ref,
        classification=event.classification,
    )


PUBLISHED = Publication(
    event=Dataset.VersionPublished,
    topic=topics.DATASET_PUBLISHED,
    payload=DatasetPublished,
    to_contract=dataset_published,
    key="datasetKey",
    title="DatasetPublished",
    description="A new immutable version of a dataset (SPEC C18); a suite pins it by "
    "datasetId and version, and reads its content at snapshotRef.",
)

PUBLICATIONS: tuple[Publication, ...] = (PUBLISHED,)
