"""The datasets context's ids, each derived (uuid5) from what it names: the same name, the
same id, in every process.

- ``harvested_run_id``: a HarvestedRun's, one per tenant and run id (C24).
- ``validation_id``: a Validation's, one per tenant, artifact, validator, run and instant (C25).
- ``dataset_key``: a Dataset's, one per tenant and dataset id.
- ``shared_dataset_id``: the dataset id of a shared copy in the receiving tenant (C17).
"""

from uuid import UUID, uuid5

from contracts.neighbours import ArtifactValidated

DATASETS_NAMESPACE = UUID("b7d2a6c4-3f1e-5a9b-8c07-1e2d3f4a5b6c")


def harvested_run_id(tenant_id: str, run_id: str) -> UUID:
    return uuid5(DATASETS_NAMESPACE, f"{tenant_id}/run/{run_id}")


def validation_id(tenant_id: str, validated: ArtifactValidated) -> UUID:
    key = "/".join(
        (
            validated.artifact_ref,
            validated.validator,
            validated.run_id or "",
            validated.validated_at.isoformat(),
        )
    )
    return uuid5(DATASETS_NAMESPACE, f"{tenant_id}/validation/{key}")


def dataset_key(tenant_id: str, dataset_id: str) -> UUID:
    return uuid5(DATASETS_NAMESPACE, f"{tenant_id}/dataset/{dataset_id}")


def shared_dataset_id(source_tenant: str, dataset_id: str) -> str:
    """The copy's id in the receiving tenant: opaque, so it names neither the source tenant
    nor its dataset (anonymisation, C17)."""
    return "shared:" + uuid5(DATASETS_NAMESPACE, f"{source_tenant}/{dataset_id}").hex[:16]
