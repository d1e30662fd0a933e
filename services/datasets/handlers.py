"""Command handlers of the datasets context: load, decide, hand back for the bus to append.

``RunCompleted`` is HarvestTask (SPEC C24) and ``ArtifactValidated`` HarvestValidation
(C25): the neighbours' events are the commands, applied once by their CloudEvent identity.
"""

from contextlib import suppress
from dataclasses import dataclass
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError

from contracts.datasets import ANONYMISED, CONFIDENTIAL, DEFAULT_SCORING_RULE
from contracts.errors import NotFound
from contracts.neighbours import ArtifactValidated, RunCompleted
from services.bus.decisions import Decision
from services.bus.issued import Issued
from services.datasets.commands import (
    AddTask,
    GrantShareConsent,
    PublishVersion,
    RemoveTask,
    ShareCopy,
)
from services.datasets.domain import Dataset, HarvestedRun, Validation
from services.datasets.ids import dataset_key, harvested_run_id, shared_dataset_id, validation_id
from services.datasets.versions import Version
from services.store.event_store import EventStore


@dataclass(frozen=True)
class Harvested:
    aggregate_id: UUID
    created: bool


@dataclass(frozen=True)
class Published:
    dataset: Dataset
    version: Version
    created: bool


def exists(store: EventStore, aggregate_id: UUID) -> bool:
    with suppress(AggregateNotFoundError):
        store.repository.get(aggregate_id)
        return True
    return False


def harvest_task(store: EventStore, issued: Issued) -> Decision:
    """SPEC C24: a completed run becomes a task candidate; the same run again changes
    nothing. Fields the neighbour added that we do not read are not kept."""
    assert isinstance(issued.command, RunCompleted)
    run = RunCompleted.model_validate(issued.command.model_dump(by_alias=True))
    aggregate_id = harvested_run_id(issued.tenant_id, run.run_id)
    if not issued.new and exists(store, aggregate_id):
        return Decision([], Harvested(aggregate_id, False))
    harvested = HarvestedRun.harvest(run, tenant_id=issued.tenant_id, at=issued.at)
    return Decision([harvested], Harvested(aggregate_id, True))


def harvest_validation(store: EventStore, issued: Issued) -> Decision:
    """SPEC C25: a validator's outcome, recorded once; the read model joins it to tasks."""
    assert isinstance(issued.command, ArtifactValidated)
    aggregate_id = validation_id(issued.tenant_id, issued.command)
    if not issued.new and exists(store, aggregate_id):
        return Decision([], Harvested(aggregate_id, False))
    validation = Validation.record(issued.command, tenant_id=issued.tenant_id, at=issued.at)
    return Decision([validation], Harvested(aggregate_id, True))


def dataset_of(
    store: EventStore, issued: Issued, dataset_id: str, tenant_id: str | None = None,
    classification: str = CONFIDENTIAL,
) -> Dataset:  # fmt: skip
    """The tenant's dataset, opened on first use. Its id derives from the tenant: another
    tenant's dataset of the same name is another aggregate (C16)."""
    tenant = tenant_id or issued.tenant_id
    try:
        dataset: Dataset = store.repository.get(dataset_key(tenant, dataset_id))
    except AggregateNotFoundError:
        dataset = Dataset.open(
            tenant_id=tenant, dataset_id=dataset_id, classification=classification, at=issued.at
        )
    return dataset


def existing_dataset(store: EventStore, issued: Issued, dataset_id: str) -> Dataset:
    try:
        dataset: Dataset = store.repository.get(dataset_key(issued.tenant_id, dataset_id))
    except AggregateNotFoundError:
        raise NotFound(f"no dataset {dataset_id}", datasetId=dataset_id) from None
    return dataset


def add_task(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, AddTask)
    dataset, task = dataset_of(store, issued, command.dataset_id), command.task
    dataset.curate(
        task.task_id, task.input_ref, task.expected_ref, task.scoring_rule or DEFAULT_SCORING_RULE,
        by=issued.actor, at=issued.at,
    )  # fmt: skip
    return Decision([dataset], task.task_id)


def remove_task(store: EventStore, issued: Issued) -> Decision:
    """A task the tenant's dataset holds, taken out; one it does not hold is 404 and opens
    no dataset (C14, C16)."""
    command = issued.command
    assert isinstance(command, RemoveTask)
    harvested = harvested_into(store, issued.tenant_id, command.dataset_id, command.task_id)
    dataset = dataset_of(store, issued, command.dataset_id)
    dataset.remove(command.task_id, harvested=harvested, by=issued.actor, at=issued.at)
    return Decision([dataset], command.task_id)


def harvested_into(store: EventStore, tenant_id: str, dataset_id: str, task_id: str) -> bool:
    """Whether the task is a run of the tenant harvested into this dataset (C24): its id is
    ``run:<runId>``, its dataset that run's agent's."""
    run_id = task_id.removeprefix("run:")
    if run_id == task_id:
        return False
    with suppress(AggregateNotFoundError):
        run: HarvestedRun = store.repository.get(harvested_run_id(tenant_id, run_id))
        return run.dataset_id == dataset_id and run.task_id == task_id
    return False


def publish_version(store: EventStore, issued: Issued) -> Decision:
    """SPEC C18, C20: the next immutable version, once per request."""
    command = issued.command
    assert isinstance(command, PublishVersion)
    dataset = dataset_of(store, issued, command.dataset_id)
    version, created = dataset.publish(
        snapshot_ref=command.snapshot_ref,
        task_count=command.task_count,
        version=command.version,
        request_key=command.request_key,
        by=issued.actor,
        at=issued.at,
    )
    return Decision([dataset] if created else [], Published(dataset, version, created))


def publishes(store: EventStore, issued: Issued) -> bool:
    """Whether ``publish_version`` would publish a new version now (not answer one published
    before), decided on a copy of the dataset that is never saved; raises what it would
    refuse with (C15, C20). The snapshot's artifact is stored only when this says a version
    will be published, so a refused request stores nothing (C53 still holds: the artifact is
    stored before the version that names it is appended)."""
    decision = publish_version(store, issued)
    published: Published = decision.result
    return published.created


def grant_share_consent(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, GrantShareConsent)
    dataset = existing_dataset(store, issued, command.dataset_id)
    created = dataset.consent(command.to_tenant, by=issued.actor, at=issued.at)
    return Decision([dataset] if created else [], created)


def share_copy(store: EventStore, issued: Issued) -> Decision:
    """SPEC C17: with consent (the memory service's, or one recorded here), the anonymised
    copy is published as a version of a dataset of the other tenant (its own id, classified
    anonymised); once per version."""
    command = issued.command
    assert isinstance(command, ShareCopy)
    source = existing_dataset(store, issued, command.dataset_id)
    to_dataset_id = shared_dataset_id(issued.tenant_id, command.dataset_id)
    if not source.share(
        command.version, command.to_tenant, to_dataset_id, by=issued.actor, at=issued.at,
        local_consent=not command.service_consent,
    ):  # fmt: skip
        copy = dataset_of(store, issued, to_dataset_id, command.to_tenant, ANONYMISED)
        known = next(v for v in copy.versions.values() if v.request_key == key_of(command))
        return Decision([], Published(copy, known, False))
    copy = dataset_of(store, issued, to_dataset_id, command.to_tenant, ANONYMISED)
    version, _ = copy.publish(
        snapshot_ref=command.snapshot_ref,
        task_count=command.task_count,
        version=None,
        request_key=key_of(command),
        by=issued.actor,
        at=issued.at,
    )
    return Decision([source, copy], Published(copy, version, True))


def key_of(command: ShareCopy) -> str:
    return f"share/{command.version}"


def created_run(issued: Issued) -> UUID:
    assert isinstance(issued.command, RunCompleted)
    return harvested_run_id(issued.tenant_id, issued.command.run_id)


def created_validation(issued: Issued) -> UUID:
    assert isinstance(issued.command, ArtifactValidated)
    return validation_id(issued.tenant_id, issued.command)
