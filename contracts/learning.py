"""Learning proposals: evidence-gated suggestions to improve an asset (SPEC C26–C47).

A proposal is raised by the ProposalGenerator only with evidence (C29) and never changes an
asset itself (C31): a maintainer picks it up and accepts it (a Draft release is requested from
the agent registry, C32) or rejects it with a reason (C33). ``reviewedBy`` is stamped from the
caller; a body that brings it is refused, naming it.
"""

from datetime import datetime
from enum import StrEnum
from typing import Literal
from uuid import UUID

from pydantic import Field
from pydantic.config import JsonDict, JsonValue

from contracts.answers import Answer, Cursor, Position, Timestamp, shown_as
from contracts.envelope import NeighbourEnvelope
from contracts.feedback import Contract
from contracts.neighbours import Neighbour
from contracts.scalars import Reason, Ref

STAMPED_PROPOSAL_FIELDS = frozenset({"reviewedBy", "tenantId", "proposalId", "state"})


class ProposalKind(StrEnum):
    """SPEC C27: what a proposal would improve or change."""

    prompt_improvement = "prompt-improvement"
    skill_improvement = "skill-improvement"
    context_strategy_improvement = "context-strategy-improvement"
    threshold_change = "threshold-change"
    dataset_addition = "dataset-addition"
    profile_change = "profile-change"
    # C40: drift asks for the asset to be evaluated again, beside its improvement (decisions D55)
    re_evaluation = "re-evaluation"


class ProposalState(StrEnum):
    """SPEC C34's states."""

    proposed = "Proposed"
    in_review = "InReview"
    accepted = "Accepted"
    rejected = "Rejected"
    superseded = "Superseded"


class EvidenceOrigin(StrEnum):
    """SPEC C28: where an item of evidence comes from."""

    failed_evaluation = "failed-evaluation"
    passed_evaluation = "passed-evaluation"  # kept as a fact, never counted (C39)
    drift = "drift"
    skill_candidate = "skill-candidate"
    feedback = "feedback"
    wrong_answer = "wrong-answer"
    eval_case_failure = "eval-case-failure"


class ExpectedEffect(Contract):
    """SPEC C30: what accepting should move, by how much, and how sure the drafter is."""

    metric: str
    from_: float | None = Field(alias="from")
    to: float | None
    confidence: float = Field(ge=0.0, le=1.0)


class EvidenceItem(Contract):
    """One row of a proposal's evidence table: a fact that already happened, by its id."""

    evidence_id: str = Field(alias="evidenceId", description="Stable: the same fact, same id.")
    origin: EvidenceOrigin
    metric: str | None = None
    value: float | None = Field(default=None, description="Observed or failing value.")
    baseline: float | None = Field(default=None, description="Threshold, baseline or before.")
    note: str = ""
    serves: tuple[str, ...] = Field(
        default=(),
        description="Goal references `kind:id` the fact names (SPEC M01), as its sender gave "
        "them: a `charter:` one ranks the proposal among its ties (M21).",
    )
    observed_at: datetime = Field(alias="observedAt")


class DecideProposal(Contract):
    """Accept (a Draft release is requested, C32) or reject with a reason (C33)."""

    decision: Literal["accept", "reject"]
    reason: Reason | None = Field(default=None, description="Required to reject (C33).")


class DecideProposalCommand(Contract):
    proposal_id: UUID = Field(alias="proposalId")
    decision: Literal["accept", "reject"]
    reason: Reason | None = None


class PickUpProposal(Contract):
    """A maintainer takes a Proposed proposal into review (C34: MaintainerPicksUp)."""

    proposal_id: UUID = Field(alias="proposalId")


class RecordRelease(Contract):
    """The agent registry's answer to an accepted proposal: its Draft release (C32)."""

    release_id: Ref = Field(alias="releaseId")


class RecordReleaseCommand(Contract):
    proposal_id: UUID = Field(alias="proposalId")
    release_id: Ref = Field(alias="releaseId")


class RaiseProposal(Contract):
    """What the generator hands the bus once a cluster has enough evidence and a draft
    (C42–C45); not a client command. ``supersedes``: the target's proposals still Proposed."""

    kind: ProposalKind
    target_asset_id: str = Field(alias="targetAssetId")
    target_version: str | None = Field(alias="targetVersion")
    evidence_hash: str = Field(alias="evidenceHash")
    evidence: list[EvidenceItem]
    summary_ref: str = Field(alias="summaryRef")
    expected_effect: ExpectedEffect | None = Field(alias="expectedEffect")
    profile: str
    supersedes: list[UUID] = Field(default_factory=list)


class DraftReleaseOpened(Neighbour):
    """The agent registry opened the Draft release an accepted proposal asked for (C32)."""

    proposal_id: UUID = Field(alias="proposalId")
    release_id: Ref = Field(alias="releaseId")


class DraftReleaseOpenedMessage(NeighbourEnvelope):
    """``factory.registry.v1.draft-release-opened``, from the agent registry."""

    type: Literal["factory.registry.v1.DraftReleaseOpened"]
    data: DraftReleaseOpened


# Published (C37, C38 and C32's request to the registry).


class LearningProposalRaised(Contract):
    """SPEC C37, on ``evaluation.learning.v1.learning-proposal-raised``."""

    proposal_id: UUID = Field(alias="proposalId")
    tenant_id: str = Field(alias="tenantId")
    kind: ProposalKind
    target_asset_id: str = Field(alias="targetAssetId")
    target_version: str | None = Field(alias="targetVersion")


class LearningProposalDecided(Contract):
    """SPEC C38, on ``evaluation.learning.v1.learning-proposal-decided``: one per change of
    state after Proposed (InReview, Accepted, Rejected, Superseded) and once more when an
    accepted proposal's release id arrives."""

    proposal_id: UUID = Field(alias="proposalId")
    tenant_id: str = Field(alias="tenantId")
    state: ProposalState
    resulting_release_id: str | None = Field(default=None, alias="resultingReleaseId")


class DraftReleaseRequested(Contract):
    """For the agent registry: open a Draft release for this accepted proposal (C32). The
    registry answers with DraftReleaseOpened (or the HTTP callback)."""

    proposal_id: UUID = Field(alias="proposalId")
    tenant_id: str = Field(alias="tenantId")
    kind: ProposalKind
    target_asset_id: str = Field(alias="targetAssetId")
    target_version: str | None = Field(alias="targetVersion")
    summary_ref: str = Field(alias="summaryRef")
    evidence_refs: list[str] = Field(alias="evidenceRefs")
    requested_by: str = Field(alias="requestedBy")


# API answers: on the ``Answer`` base, each with its example (``services/edge/openapi.py`` shows
# it).

PROPOSAL_ID = "45961f88-d549-5194-b46e-3580d27a520d"  # acme's Office_Agent_Coach, three items
_EVIDENCE_IDS = [f"evaluation:eval-{n}" for n in (311, 318, 324)]
_EVIDENCE: list[JsonValue] = [
    {
        "evidenceId": evidence_id,
        "origin": "failed-evaluation",
        "metric": "groundedness",
        "value": value,
        "baseline": 0.8,
        "note": "gate grounded failed",
        "serves": ["charter:grounded-answers"],
        "observedAt": at,
    }
    for evidence_id, value, at in zip(
        _EVIDENCE_IDS,
        (0.55, 0.6, 0.5),
        ("2026-11-27T22:10:00+00:00", "2026-11-28T22:10:00+00:00", "2026-11-29T22:10:00+00:00"),
        strict=True,
    )
]
PROPOSAL_VIEW_EXAMPLE: JsonDict = {
    "proposalId": PROPOSAL_ID,
    "tenantId": "acme",
    "kind": "prompt-improvement",
    "targetAssetId": "Office_Agent_Coach",
    "targetVersion": "1.4.0",
    "summaryRef": "artifact:sha256:"
    "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881",
    "evidenceRefs": list[JsonValue](_EVIDENCE_IDS),
    "evidence": _EVIDENCE,
    "evidenceHash": "31872a9bff5ce886c53b76519b75d1f72311ac430508e3dbd178edc896246295",
    "expectedEffect": {"metric": "groundedness", "from": 0.55, "to": 0.8, "confidence": 0.75},
    "state": "Accepted",
    "raisedAt": "2026-11-30T06:00:02.518204+00:00",
    "reviewedBy": "bruno",
    "decidedAt": "2026-11-30T09:41:37.004512+00:00",
    "reason": None,
    "supersededBy": None,
    "resultingReleaseId": None,
    "waitingForRelease": True,
    "profile": "structured",
    "charterLine": "grounded-answers",
}
PROPOSAL_WRITTEN_EXAMPLE: JsonDict = {
    "proposalId": PROPOSAL_ID,
    "state": "Accepted",
    "reviewedBy": "bruno",
    "resultingReleaseId": None,
    "position": "Ffz74Sl0Xi08O0_C-g0PbX9Ov1Z3UGT6U0XNfLkbw2XZzT1a",
}
StateShown = Literal["Proposed", "InReview", "Accepted", "Rejected", "Superseded"]


class EvidenceRow(Answer):
    evidence_id: str = Field(alias="evidenceId")
    origin: str
    metric: str | None
    value: float | None
    baseline: float | None
    note: str
    serves: list[str] = Field(default_factory=list)
    observed_at: Timestamp = Field(alias="observedAt")


class EffectShown(Answer):
    """SPEC C30."""

    metric: str
    from_: float | None = Field(alias="from")
    to: float | None
    confidence: float


class ProposalView(Answer):
    """SPEC C26 and C36: a proposal with its evidence and expected effect."""

    model_config = shown_as(PROPOSAL_VIEW_EXAMPLE)

    proposal_id: str = Field(alias="proposalId", json_schema_extra={"format": "uuid"})
    tenant_id: str = Field(alias="tenantId")
    kind: str = Field(description="SPEC C27: " + ", ".join(kind.value for kind in ProposalKind))
    target_asset_id: str = Field(alias="targetAssetId")
    target_version: str | None = Field(alias="targetVersion")
    summary_ref: str = Field(alias="summaryRef", description="The drafted summary (C06).")
    evidence_refs: list[str] = Field(alias="evidenceRefs")
    evidence: list[EvidenceRow]
    evidence_hash: str = Field(alias="evidenceHash")
    expected_effect: EffectShown | None = Field(alias="expectedEffect")
    state: StateShown
    raised_at: Timestamp = Field(alias="raisedAt")
    reviewed_by: str | None = Field(alias="reviewedBy")
    decided_at: Timestamp | None = Field(alias="decidedAt")
    reason: str | None
    superseded_by: str | None = Field(alias="supersededBy")
    resulting_release_id: str | None = Field(alias="resultingReleaseId")
    waiting_for_release: bool = Field(
        alias="waitingForRelease",
        description="Accepted, and the registry has not answered with the release id yet (C53).",
    )
    profile: str = Field(description="The drafter's profile (C46).")
    charter_line: str | None = Field(
        default=None,
        alias="charterLine",
        description="The highest-ranked line of the tenant's charter that the evidence serves "
        "(M19: a line the charter has); among proposals with as much evidence, a higher line "
        "comes first (M21).",
    )


class ProposalList(Answer):
    model_config = shown_as({"items": [PROPOSAL_VIEW_EXAMPLE], "next": None})

    items: list[ProposalView]
    next: Cursor


class ProposalWritten(Answer):
    model_config = shown_as(PROPOSAL_WRITTEN_EXAMPLE)

    proposal_id: str = Field(alias="proposalId", json_schema_extra={"format": "uuid"})
    state: StateShown
    reviewed_by: str | None = Field(alias="reviewedBy")
    resulting_release_id: str | None = Field(alias="resultingReleaseId")
    position: Position
