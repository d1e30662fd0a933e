"""The datasets context's aggregates (SPEC C13–C25): harvested runs, validations, datasets.

- ``HarvestedRun``: one per tenant and run id (C24). Created once from a RunCompleted, whose
  whole payload it keeps as the typed field ``run`` (appraisal reads its counters and goals);
  a repeat of the same run changes nothing.
- ``Validation``: one per tenant, artifact, validator, run and instant (C25).
- ``Dataset``: one per tenant and dataset id: curated additions and removals (only of a task
  it holds), the published versions (each immutable, C15), consents to share and the shares
  made (C17).

Decisions are pure: ids, instants and who acts come in with the call.
"""

from datetime import datetime

from eventsourcing.domain import Aggregate, event

from contracts.datasets import DEFAULT_SCORING_RULE, dataset_target, harvested_dataset
from contracts.errors import Conflict, NotFound, NotPermitted
from contracts.neighbours import ArtifactValidated, RunCompleted
from services.datasets.ids import dataset_key, harvested_run_id, validation_id
from services.datasets.versions import Version, immutable
from services.store.sealing import Personal


class HarvestedRun(Aggregate):
    class Harvested(Aggregate.Created):
        tenant_id: str
        dataset_id: str
        run: RunCompleted  # the whole event received (typed: appraisal reads it)
        task_id: str
        input_ref: str
        expected_ref: str | None  # the run's own output, when it succeeded
        scoring_rule: str

    def __init__(
        self,
        tenant_id: str,
        dataset_id: str,
        run: RunCompleted,
        task_id: str,
        input_ref: str,
        expected_ref: str | None,
        scoring_rule: str,
    ) -> None:
        self.tenant_id, self.dataset_id, self.run = tenant_id, dataset_id, run
        self.task_id, self.input_ref = task_id, input_ref
        self.expected_ref, self.scoring_rule = expected_ref, scoring_rule

    @classmethod
    def harvest(cls, run: RunCompleted, *, tenant_id: str, at: datetime) -> "HarvestedRun":
        """SPEC C24: the run becomes a task candidate of its agent's dataset."""
        return cls._create(
            cls.Harvested,
            id=harvested_run_id(tenant_id, run.run_id),
            timestamp=at,
            tenant_id=tenant_id,
            dataset_id=harvested_dataset(run.agent_id),
            run=run,
            task_id=f"run:{run.run_id}",
            input_ref=run.input_ref,
            expected_ref=run.output_ref if run.outcome == "succeeded" else None,
            scoring_rule=run.scoring_rule or DEFAULT_SCORING_RULE,
        )


class Validation(Aggregate):
    class Recorded(Aggregate.Created):
        tenant_id: str
        artifact_ref: str
        run_id: str | None
        validator: str
        outcome: str
        findings: int
        validated_at: datetime

    def __init__(
        self,
        tenant_id: str,
        artifact_ref: str,
        run_id: str | None,
        validator: str,
        outcome: str,
        findings: int,
        validated_at: datetime,
    ) -> None:
        self.tenant_id, self.artifact_ref, self.run_id = tenant_id, artifact_ref, run_id
        self.validator, self.outcome, self.findings = validator, outcome, findings
        self.validated_at = validated_at

    @classmethod
    def record(cls, validated: ArtifactValidated, *, tenant_id: str, at: datetime) -> "Validation":
        """SPEC C25: a validator's outcome, joined to the tasks it names by the read model."""
        return cls._create(
            cls.Recorded,
            id=validation_id(tenant_id, validated),
            timestamp=at,
            tenant_id=tenant_id,
            artifact_ref=validated.artifact_ref,
            run_id=validated.run_id,
            validator=validated.validator,
            outcome=validated.outcome.value,
            findings=validated.findings,
            validated_at=validated.validated_at,
        )


class Dataset(Aggregate):
    class Opened(Aggregate.Created):
        tenant_id: str
        dataset_id: str
        name: str
        target: str
        classification: str

    class TaskCurated(Aggregate.Event):
        personal = Personal(names={"curated_by": "the curator"})  # their own keys, D130

        tenant_id: str
        dataset_id: str
        task_id: str
        input_ref: str
        expected_ref: str
        scoring_rule: str
        curated_by: str

    class TaskRemoved(Aggregate.Event):
        personal = Personal(names={"removed_by": "the curator"})  # their own keys, D130

        tenant_id: str
        dataset_id: str
        task_id: str
        removed_by: str

    class VersionPublished(Aggregate.Event):
        personal = Personal(names={"published_by": "the curator"})  # their own keys, D130

        tenant_id: str
        dataset_id: str
        name: str
        target: str
        version: int
        snapshot_ref: str
        task_count: int
        classification: str
        published_by: str
        request_key: str | None

    class ShareConsentRecorded(Aggregate.Event):
        personal = Personal(names={"consented_by": "PlatformAdmin"})  # their own keys, D130

        tenant_id: str
        to_tenant: str
        consented_by: str

    class VersionShared(Aggregate.Event):
        personal = Personal(names={"shared_by": "PlatformAdmin"})  # their own keys, D130

        tenant_id: str
        version: int
        to_tenant: str
        to_dataset_id: str
        shared_by: str

    def __init__(
        self, tenant_id: str, dataset_id: str, name: str, target: str, classification: str
    ) -> None:
        self.tenant_id, self.dataset_id, self.name = tenant_id, dataset_id, name
        self.target, self.classification = target, classification
        self.curated: set[str] = set()  # the curated tasks' ids
        self.removed: set[str] = set()  # ids taken out, until curated again
        self.versions: dict[int, Version] = {}
        self.consents: set[str] = set()
        self.shares: dict[tuple[int, str], str] = {}

    @classmethod
    def open(
        cls, *, tenant_id: str, dataset_id: str, classification: str, at: datetime
    ) -> "Dataset":
        return cls._create(
            cls.Opened,
            id=dataset_key(tenant_id, dataset_id),
            timestamp=at,
            tenant_id=tenant_id,
            dataset_id=dataset_id,
            name=dataset_id,
            target=dataset_target(dataset_id),
            classification=classification,
        )

    # Curation (C14)

    def curate(
        self, task_id: str, input_ref: str, expected_ref: str, scoring_rule: str, *, by: str,
        at: datetime,
    ) -> None:  # fmt: skip
        """Adds the task (a curated task of the same id is replaced: the latest wins)."""
        self._curated(
            tenant_id=self.tenant_id, dataset_id=self.dataset_id, task_id=task_id,
            input_ref=input_ref,
            expected_ref=expected_ref, scoring_rule=scoring_rule, curated_by=by, timestamp=at,
        )  # fmt: skip

    @event(TaskCurated)
    def _curated(
        self, tenant_id: str, dataset_id: str, task_id: str, input_ref: str,
        expected_ref: str, scoring_rule: str, curated_by: str, timestamp: datetime,
    ) -> None:  # fmt: skip
        self.curated.add(task_id)
        self.removed.discard(task_id)

    def remove(self, task_id: str, *, harvested: bool, by: str, at: datetime) -> None:
        """Takes a task it holds out of the next snapshots: a curated one, or a run harvested
        into it (``harvested``, C24) not taken out before. Any other is not found (C14, C16):
        nothing is recorded."""
        if task_id not in self.curated and (not harvested or task_id in self.removed):
            raise NotFound(
                f"no task {task_id} in {self.dataset_id}", datasetId=self.dataset_id, taskId=task_id
            )
        self._removed(tenant_id=self.tenant_id, dataset_id=self.dataset_id, task_id=task_id,
                      removed_by=by, timestamp=at)  # fmt: skip

    @event(TaskRemoved)
    def _removed(
        self, tenant_id: str, dataset_id: str, task_id: str, removed_by: str, timestamp: datetime
    ) -> None:
        self.curated.discard(task_id)
        self.removed.add(task_id)

    # Versions (C15, C18, C20)

    @property
    def next_version(self) -> int:
        return max(self.versions, default=0) + 1

    def publish(
        self,
        *,
        snapshot_ref: str,
        task_count: int,
        version: int | None,
        request_key: str | None,
        by: str,
        at: datetime,
    ) -> tuple[Version, bool]:
        """The next version, or the one this request published before (C20): the same
        Idempotency-Key, or the same version number with the same content. A published
        version never changes (C15): the same number with other content is refused."""
        if request_key is not None:
            for known in self.versions.values():
                if known.request_key != request_key:
                    continue
                if version is not None and version != known.version:
                    raise Conflict(
                        "this Idempotency-Key was used before with another request",
                        field="Idempotency-Key",
                        reason="idempotency-key-reused",
                    )
                return known, False
        if version is not None and version in self.versions:
            known = self.versions[version]
            if known.snapshot_ref != snapshot_ref:
                raise immutable(self.dataset_id, version)
            return known, False
        if version is not None and version != self.next_version:
            raise Conflict(
                f"the next version of {self.dataset_id} is {self.next_version}, not {version}",
                reason="not-next-version",
                datasetId=self.dataset_id,
                nextVersion=self.next_version,
                field="version",
            )
        number = self.next_version
        self._published(
            tenant_id=self.tenant_id, dataset_id=self.dataset_id, name=self.name,
            target=self.target, version=number, snapshot_ref=snapshot_ref,
            task_count=task_count, classification=self.classification, published_by=by,
            request_key=request_key, timestamp=at,
        )  # fmt: skip
        return self.versions[number], True

    @event(VersionPublished)
    def _published(
        self, tenant_id: str, dataset_id: str, name: str, target: str, version: int,
        snapshot_ref: str, task_count: int, classification: str, published_by: str,
        request_key: str | None, timestamp: datetime,
    ) -> None:  # fmt: skip
        self.versions[version] = Version(
            version, snapshot_ref, task_count, classification, timestamp, request_key
        )

    # Sharing (C17)

    def consent(self, to_tenant: str, *, by: str, at: datetime) -> bool:
        if to_tenant == self.tenant_id:
            raise NotPermitted("a dataset is not shared with its own tenant", field="toTenant")
        if to_tenant in self.consents:
            return False
        self._consented(tenant_id=self.tenant_id, to_tenant=to_tenant, consented_by=by,
                        timestamp=at)  # fmt: skip
        return True

    @event(ShareConsentRecorded)
    def _consented(
        self, tenant_id: str, to_tenant: str, consented_by: str, timestamp: datetime
    ) -> None:
        self.consents.add(to_tenant)

    def check_share(self, version: int, to_tenant: str, *, local_consent: bool = True) -> None:
        """Sharing needs consent for that tenant (C17); refused before anything is copied.
        ``local_consent``: the consent is the one recorded here (a tenant without a
        MemoryPromotionService, decisions D56); otherwise that service granted it."""
        if to_tenant == self.tenant_id:
            raise NotPermitted("a dataset is not shared with its own tenant", field="toTenant")
        if version not in self.versions:
            raise Conflict(f"{self.dataset_id} has no version {version}", reason="no-version")
        if local_consent and to_tenant not in self.consents:
            raise NotPermitted(
                f"no consent is recorded to share {self.dataset_id} with {to_tenant}",
                field="toTenant",
                reason="consent-required",
            )

    def share(self, version: int, to_tenant: str, to_dataset_id: str, *, by: str,
              at: datetime, local_consent: bool = True) -> bool:  # fmt: skip
        self.check_share(version, to_tenant, local_consent=local_consent)
        if (version, to_tenant) in self.shares:
            return False
        self._shared(tenant_id=self.tenant_id, version=version, to_tenant=to_tenant,
                     to_dataset_id=to_dataset_id, shared_by=by, timestamp=at)  # fmt: skip
        return True

    @event(VersionShared)
    def _shared(
        self, tenant_id: str, version: int, to_tenant: str, to_dataset_id: str, shared_by: str,
        timestamp: datetime,
    ) -> None:  # fmt: skip
        self.shares[(version, to_tenant)] = to_dataset_id
