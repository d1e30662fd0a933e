"""Which learning events leave the service (SPEC C32, C37, C38).

A neighbour sees each proposal's events once per change, in order per proposal: every change
of a proposal after it is raised publishes one LearningProposalDecided with the state it moved
to: InReview (picked up), Rejected, Superseded, and Accepted with ``resultingReleaseId`` when
the registry's answer is recorded (C34: InReview→Accepted on ReleaseCandidateOpened, decisions
D54). A maintainer's accept moves no state: it publishes DraftReleaseRequested for the agent
registry (C32), on a topic of its own. A proposal accepted before D54 published Accepted
without the release id, then Accepted again with it; those messages stay in the log as they
were. All are keyed by the proposal id, so one partition holds a proposal's history in order.
"""

from typing import Any

from contracts import topics
from contracts.learning import (
    DraftReleaseRequested,
    LearningProposalDecided,
    LearningProposalRaised,
    ProposalState,
)
from services.kafka.publication import Publication
from services.learning.domain import LearningProposal

DECIDED_DESCRIPTION = (
    "A proposal changed state (SPEC C38): InReview, Rejected or Superseded, one message per "
    "change; Accepted, with resultingReleaseId, once the agent registry opened the Draft "
    "release a maintainer's accept asked for (C32, C34). A proposal accepted before that rule "
    "published Accepted without resultingReleaseId first."
)


def raised(event: Any) -> LearningProposalRaised:
    return LearningProposalRaised(
        proposal_id=event.originator_id,
        tenant_id=event.tenant_id,
        kind=event.kind,
        target_asset_id=event.target_asset_id,
        target_version=event.target_version,
    )


def decided_as(state: ProposalState) -> Any:
    def decided(event: Any) -> LearningProposalDecided:
        return LearningProposalDecided(
            proposal_id=event.originator_id,
            tenant_id=event.tenant_id,
            state=state,
            resulting_release_id=getattr(event, "release_id", None),
        )

    return decided


def draft_release_requested(event: Any) -> DraftReleaseRequested:
    return DraftReleaseRequested(
        proposal_id=event.originator_id,
        tenant_id=event.tenant_id,
        kind=event.kind,
        target_asset_id=event.target_asset_id,
        target_version=event.target_version,
        summary_ref=event.summary_ref,
        evidence_refs=event.evidence_refs,
        requested_by=event.requested_by,
    )


RAISED = Publication(
    event=LearningProposal.Raised,
    topic=topics.LEARNING_PROPOSAL_RAISED,
    payload=LearningProposalRaised,
    to_contract=raised,
    key="proposalId",
    title="LearningProposalRaised",
    description="A learning proposal was raised with its evidence (SPEC C37).",
)


def decided(event: type, state: ProposalState) -> Publication:
    return Publication(
        event=event,
        topic=topics.LEARNING_PROPOSAL_DECIDED,
        payload=LearningProposalDecided,
        to_contract=decided_as(state),
        key="proposalId",
        title="LearningProposalDecided",
        description=DECIDED_DESCRIPTION,
    )


DRAFT_RELEASE = Publication(
    event=LearningProposal.DraftReleaseRequested,
    topic=topics.DRAFT_RELEASE_REQUESTED,
    payload=DraftReleaseRequested,
    to_contract=draft_release_requested,
    key="proposalId",
    title="DraftReleaseRequested",
    description="An accepted proposal asks the agent registry for a Draft release (SPEC "
    "C32); the registry answers with DraftReleaseOpened or the HTTP callback. The proposal "
    "itself changes no asset (C31).",
)

PUBLICATIONS: tuple[Publication, ...] = (
    RAISED,
    decided(LearningProposal.PickedUp, ProposalState.in_review),
    decided(LearningProposal.Accepted, ProposalState.accepted),
    decided(LearningProposal.Rejected, ProposalState.rejected),
    decided(LearningProposal.Superseded, ProposalState.superseded),
    decided(LearningProposal.ReleaseRecorded, ProposalState.accepted),
    DRAFT_RELEASE,
)
