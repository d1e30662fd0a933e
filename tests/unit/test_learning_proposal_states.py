"""The LearningProposal state machine, exactly SPEC C34: every transition, allowed and refused.

InReview→Accepted happens when the Draft release exists (ReleaseCandidateOpened); the
maintainer's accept before it approves the proposal, which stays InReview (decisions D54)."""

from datetime import UTC, datetime
from uuid import uuid4

import pytest

from contracts.errors import Conflict, InvalidTransition, Refused
from contracts.learning import (
    EvidenceItem,
    EvidenceOrigin,
    ProposalKind,
    ProposalState,
    RaiseProposal,
)
from services.learning.domain import LearningProposal, proposal_id_for
from services.learning.published import PUBLICATIONS
from services.processes.published import by_event

AT = datetime(2026, 11, 30, 6, tzinfo=UTC)


def item(n: int) -> EvidenceItem:
    return EvidenceItem(
        evidence_id=f"evaluation:e{n}",
        origin=EvidenceOrigin.failed_evaluation,
        metric="groundedness",
        value=0.5,
        baseline=0.8,
        observed_at=AT,
    )


def raised(evidence: int = 3) -> LearningProposal:
    command = RaiseProposal(
        kind=ProposalKind.prompt_improvement,
        target_asset_id="agent-1",
        target_version="v3",
        evidence_hash="h",
        evidence=[item(n) for n in range(evidence)],
        summary_ref="artifact:sha256:00",
        expected_effect=None,
        profile="structured",
    )
    return LearningProposal.raise_(tenant_id="t", command=command, at=AT)


def in_state(state: ProposalState) -> LearningProposal:
    proposal = raised()
    if state == ProposalState.superseded:
        assert proposal.supersede(by=uuid4(), at=AT)
    if state in (ProposalState.in_review, ProposalState.accepted, ProposalState.rejected):
        proposal.pick_up(by="maria", at=AT)
    if state == ProposalState.accepted:
        proposal.accept(by="maria", at=AT)
        proposal.record_release(release_id="rel-0", at=AT)
    if state == ProposalState.rejected:
        proposal.reject(by="maria", reason="no", at=AT)
    assert proposal.state == state
    return proposal


def test_a_raised_proposal_is_proposed_with_an_id_from_target_and_evidence_hash() -> None:
    proposal = raised()
    assert proposal.state == ProposalState.proposed
    assert proposal.id == proposal_id_for("t", "agent-1", "h")  # C43
    assert proposal.evidence_refs == ["evaluation:e0", "evaluation:e1", "evaluation:e2"]


def test_a_proposal_without_evidence_is_never_raised() -> None:  # C29
    with pytest.raises(Refused) as refused:
        raised(evidence=0)
    assert refused.value.field == "evidence"


def test_proposed_to_in_review_stamps_the_reviewer() -> None:
    proposal = in_state(ProposalState.in_review)
    assert proposal.reviewed_by == "maria"


def test_a_maintainer_s_accept_requests_a_draft_release_and_stays_in_review() -> None:
    """C32, C34, decisions D54: approved, InReview, until the release exists."""
    proposal = in_state(ProposalState.in_review)
    proposal.collect_events()
    proposal.accept(by="maria", at=AT)
    events = proposal.collect_events()
    assert [type(e).__name__ for e in events] == ["ApprovedForRelease", "DraftReleaseRequested"]
    assert events[1].target_asset_id == "agent-1"  # type: ignore[attr-defined]
    assert (proposal.state, proposal.approved) == (ProposalState.in_review, True)


def test_the_release_candidate_opened_moves_an_approved_proposal_to_accepted() -> None:  # C34
    proposal = in_state(ProposalState.in_review)
    proposal.accept(by="maria", at=AT)
    proposal.record_release(release_id="rel-7", at=AT)
    assert (proposal.state, proposal.release_id) == (ProposalState.accepted, "rel-7")


def test_an_approved_proposal_is_decided_a_reject_is_refused_an_accept_is_a_repeat() -> None:
    proposal = in_state(ProposalState.in_review)
    proposal.accept(by="maria", at=AT)
    proposal.collect_events()
    proposal.accept(by="maria", at=AT)  # C35: the same request again
    assert proposal.collect_events() == []
    with pytest.raises(InvalidTransition) as refused:
        proposal.reject(by="maria", reason="changed my mind", at=AT)
    assert refused.value.details["requested"] == "Rejected"
    assert "approved" in refused.value.details["current"]


def test_a_proposal_accepted_before_the_rule_still_takes_its_release_once() -> None:
    """A log written before decisions D54 holds ``Accepted`` (no release yet): it stays
    Accepted, and the registry's answer is recorded on it once."""
    proposal = in_state(ProposalState.in_review)
    proposal._accepted(tenant_id="t", reviewed_by="maria", timestamp=AT)
    assert proposal.state == ProposalState.accepted
    proposal.record_release(release_id="rel-1", at=AT)
    assert proposal.release_id == "rel-1"


def test_in_review_to_rejected_needs_a_reason() -> None:  # C33
    proposal = in_state(ProposalState.in_review)
    for reason in (None, "  "):
        with pytest.raises(Refused) as refused:
            proposal.reject(by="maria", reason=reason, at=AT)
        assert refused.value.field == "reason"
    proposal.reject(by="maria", reason="the evidence is stale", at=AT)
    assert proposal.state == ProposalState.rejected


def test_only_a_proposed_proposal_is_superseded() -> None:
    assert raised().supersede(by=uuid4(), at=AT)
    for state in (
        ProposalState.in_review,
        ProposalState.accepted,
        ProposalState.rejected,
        ProposalState.superseded,
    ):
        proposal = in_state(state)
        proposal.collect_events()
        assert not proposal.supersede(by=uuid4(), at=AT)
        assert proposal.collect_events() == []


MOVES = {
    ProposalState.in_review: lambda p: p.pick_up(by="x", at=AT),
    ProposalState.accepted: lambda p: p.accept(by="x", at=AT),
    ProposalState.rejected: lambda p: p.reject(by="x", reason="r", at=AT),
}
ALLOWED = {
    (ProposalState.proposed, ProposalState.in_review),
    (ProposalState.in_review, ProposalState.accepted),
    (ProposalState.in_review, ProposalState.rejected),
}


@pytest.mark.parametrize("current", list(ProposalState))
@pytest.mark.parametrize("requested", list(MOVES))
def test_every_other_transition_is_refused_naming_both_states(
    current: ProposalState, requested: ProposalState
) -> None:
    proposal = in_state(current)
    proposal.collect_events()
    if (current, requested) == (ProposalState.in_review, ProposalState.accepted):
        MOVES[requested](proposal)  # decisions D54: approved; Accepted with its release
        assert (proposal.state, proposal.approved) == (ProposalState.in_review, True)
    elif (current, requested) in ALLOWED:
        MOVES[requested](proposal)
        assert proposal.state == requested
    elif current == requested:  # C35: the same request again, nothing appended
        MOVES[requested](proposal)
        assert proposal.collect_events() == []
    else:
        with pytest.raises(InvalidTransition) as refused:
            MOVES[requested](proposal)
        assert refused.value.details == {"current": current.value, "requested": requested.value}
        assert current.value in refused.value.message
        assert requested.value in refused.value.message


def test_a_decision_on_a_superseded_proposal_is_refused() -> None:
    proposal = in_state(ProposalState.superseded)
    with pytest.raises(InvalidTransition):
        proposal.accept(by="x", at=AT)


def test_the_release_id_is_recorded_once_on_an_approved_proposal_only() -> None:
    for state in (ProposalState.proposed, ProposalState.in_review, ProposalState.rejected):
        with pytest.raises(InvalidTransition):
            in_state(state).record_release(release_id="r1", at=AT)
    proposal = in_state(ProposalState.in_review)
    proposal.accept(by="maria", at=AT)
    proposal.record_release(release_id="r1", at=AT)
    proposal.collect_events()
    proposal.record_release(release_id="r1", at=AT)  # the registry's redelivery
    assert proposal.collect_events() == []
    with pytest.raises(Conflict):
        proposal.record_release(release_id="r2", at=AT)
    assert proposal.release_id == "r1"


def published(proposal: LearningProposal) -> list[tuple[str, dict[str, object]]]:
    """What the relay would publish of the proposal's pending events: (topic, payload)."""
    shown = []
    for event in proposal.collect_events():
        publication = by_event().get(type(event))
        if publication is None:
            continue  # a private event (ApprovedForRelease: DraftReleaseRequested says it)
        payload = publication.to_contract(event).model_dump(mode="json", by_alias=True)
        shown.append((publication.topic, payload))
    return shown


def test_every_change_publishes_one_message_keyed_by_the_proposal() -> None:
    """C37, C38: raised once; each later change one LearningProposalDecided with the state it
    moved to; accepting asks the registry for a Draft release (C32) and Accepted is published
    once, with the release (C34, decisions D54)."""
    proposal = raised()
    proposal.pick_up(by="maria", at=AT)
    proposal.accept(by="maria", at=AT)
    proposal.record_release(release_id="rel-1", at=AT)
    rejected = in_state(ProposalState.in_review)
    rejected.collect_events()
    rejected.reject(by="maria", reason="no", at=AT)
    superseded = raised()
    superseded.collect_events()
    superseded.supersede(by=uuid4(), at=AT)
    pid = str(proposal.id)
    decided = "evaluation.learning.v1.learning-proposal-decided"

    def change(state: str, release: str | None = None) -> tuple[str, dict[str, object]]:
        body = {"proposalId": pid, "tenantId": "t", "state": state, "resultingReleaseId": release}
        return decided, body

    shown = published(proposal)
    assert shown[0] == (
        "evaluation.learning.v1.learning-proposal-raised",
        {"proposalId": pid, "tenantId": "t", "kind": "prompt-improvement",
         "targetAssetId": "agent-1", "targetVersion": "v3"},
    )  # fmt: skip
    assert shown[1] == change("InReview")
    assert shown[2][0] == "evaluation.learning.v1.draft-release-requested"
    assert shown[2][1]["evidenceRefs"] == proposal.evidence_refs
    assert shown[3:] == [change("Accepted", "rel-1")]
    assert published(rejected) == [change("Rejected")]
    assert published(superseded) == [change("Superseded")]
    assert {p.key for p in PUBLICATIONS} == {"proposalId"}
