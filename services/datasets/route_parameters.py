"""What the datasets routes name the same way (SPEC C13–C21): the scopes they are called
with, the read model they wait for, and their path parameters."""

from typing import Annotated

from fastapi import Path
from pydantic import BeforeValidator

from contracts.datasets import DatasetId
from contracts.scalars import DatasetVersion, canonical_number

READ, RUN = "factory.evaluation.read", "factory.evaluation.run"
READ_MODEL = "datasets"
DatasetIdPath = Annotated[DatasetId, Path(alias="datasetId")]
# A version in ASCII digits, written one way (as ``contracts.scalars.PathNumber``).
VersionPath = Annotated[DatasetVersion, BeforeValidator(canonical_number), Path()]
