"""Evidence: a neighbour's event kept as a fact in the store, once (SPEC C28, C39–C41).

Each EvaluationCompleted, DriftDetected and SkillCandidateProposed becomes one ``Evidence``
aggregate whose id derives from the tenant and the event's own id (``evaluation:<id>``,
``drift:<id>``, ``skill-candidate:<id>``): the same event sent again, under another CloudEvent
id or replayed from offset 0, names the same aggregate and appends nothing.

Decision (C39): an evaluation that passed every gate and shows no regression is recorded too,
with ``counts=False``: it is a fact we saw (a replay still appends nothing, and a reader can
tell "seen, passed" from "never seen"), but it is never an item of a proposal's evidence.
"""

from datetime import datetime
from typing import Any
from uuid import UUID, uuid5

from eventsourcing.domain import Aggregate

from contracts.learning import EvidenceItem, EvidenceOrigin
from contracts.neighbours import DriftDetected, EvaluationCompleted, SkillCandidateProposed

EVIDENCE_NAMESPACE = UUID("7c0e5b2a-3d41-5f8e-a9b6-1e2d3c4b5a69")


def evidence_id_for(tenant_id: str, ref: str) -> UUID:
    """The one Evidence aggregate of a tenant's fact (``ref`` is the evidence id)."""
    return uuid5(EVIDENCE_NAMESPACE, f"{tenant_id}/{ref}")


class Evidence(Aggregate):
    class Recorded(Aggregate.Created):
        tenant_id: str
        target_asset_id: str
        target_kind: str
        target_version: str | None
        counts: bool
        item: dict[str, Any]

    def __init__(
        self,
        tenant_id: str,
        target_asset_id: str,
        target_kind: str,
        target_version: str | None,
        counts: bool,
        item: dict[str, Any],
    ) -> None:
        self.tenant_id = tenant_id
        self.target_asset_id = target_asset_id
        self.target_kind = target_kind
        self.target_version = target_version
        self.counts = counts
        self.item = item

    @classmethod
    def record(
        cls,
        *,
        tenant_id: str,
        target_asset_id: str,
        target_kind: str,
        target_version: str | None,
        counts: bool,
        item: EvidenceItem,
        at: datetime,
    ) -> "Evidence":
        return cls._create(
            cls.Recorded,
            id=evidence_id_for(tenant_id, item.evidence_id),
            timestamp=at,
            tenant_id=tenant_id,
            target_asset_id=target_asset_id,
            target_kind=target_kind,
            target_version=target_version,
            counts=counts,
            item=item.model_dump(mode="json", by_alias=True),
        )


def evaluation_counts(event: EvaluationCompleted) -> bool:
    """C39: failed gates or regressions (or a failed evaluation that names neither)."""
    failed_gates = any(not gate.passed for gate in event.gates)
    return failed_gates or bool(event.regressions) or not event.passed


def evaluation_item(event: EvaluationCompleted) -> EvidenceItem:
    """The evaluation as one row: its first failed gate (else its first regression) gives
    the metric; every failing gate and regression is named in the note."""
    failed = [gate for gate in event.gates if not gate.passed]
    notes = [f"gate {gate.name} failed" for gate in failed]
    notes += [f"{r.metric} regressed {r.before:g} -> {r.after:g}" for r in event.regressions]
    metric = value = baseline = None
    if failed:
        metric, value, baseline = failed[0].metric or failed[0].name, failed[0].value, None
        baseline = failed[0].threshold
    elif event.regressions:
        first = event.regressions[0]
        metric, value, baseline = first.metric, first.after, first.before
    counts = evaluation_counts(event)
    return EvidenceItem(
        evidence_id=f"evaluation:{event.evaluation_id}",
        origin=EvidenceOrigin.failed_evaluation if counts else EvidenceOrigin.passed_evaluation,
        metric=metric,
        value=value,
        baseline=baseline,
        note="; ".join(notes) or ("failed" if counts else "passed"),
        serves=tuple(event.serves),
        observed_at=event.completed_at,
    )


def drift_item(event: DriftDetected) -> EvidenceItem:
    """C40: drift always counts."""
    return EvidenceItem(
        evidence_id=f"drift:{event.drift_id}",
        origin=EvidenceOrigin.drift,
        metric=event.metric,
        value=event.observed,
        baseline=event.baseline,
        note=f"{event.metric} drifted from {event.baseline:g} to {event.observed:g}",
        serves=tuple(event.serves),
        observed_at=event.detected_at,
    )


def skill_item(event: SkillCandidateProposed) -> EvidenceItem:
    """C41: reinforced procedural memory always counts."""
    return EvidenceItem(
        evidence_id=f"skill-candidate:{event.candidate_id}",
        origin=EvidenceOrigin.skill_candidate,
        metric="reinforcements",
        value=float(event.reinforcements),
        note=f"procedure reinforced {event.reinforcements} time(s)"
        + (f"; summary {event.summary_ref}" if event.summary_ref else ""),
        serves=tuple(event.serves),
        observed_at=event.proposed_at,
    )
