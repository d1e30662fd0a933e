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
