"""The LearningProposal aggregate and its state machine, exactly SPEC C34.

```
Proposed ──PickUp──► InReview ──Decide(accept)──► InReview, approved ──release id──► Accepted
   │                     └─────Decide(reject, reason)──► Rejected
   └──newer proposal on the same target──► Superseded
```

Decision (decisions D54, C34 "InReview→Accepted (ReleaseCandidateOpened)"): the maintainer's
accept is a flag of InReview (``ApprovedForRelease``), not a state; the proposal becomes
Accepted when the agent registry answers with the Draft release it opened, so Accepted always
means a release exists. A proposal approved this way is decided: a reject after it is refused.
Proposals accepted before this rule (their log holds ``Accepted``) stay Accepted and still take
their release id once.

Every other transition is refused (``InvalidTransition``, 409) naming the current and the
requested state. Decision (C35, "idempotency is natural"): asking again for the state a
proposal is already in by the same move (a second pick-up of an InReview proposal, a second
accept of an Accepted one) is the same request again, answered with the proposal as it is and
appending nothing; any other move from there is a transition and refused.

Approving appends ``ApprovedForRelease`` and ``DraftReleaseRequested`` together: the second is the
request to the agent registry (C32, C53), published apart. The proposal itself changes no
asset (C31); the registry's answer is recorded with ``ReleaseRecorded``.

The proposal's id derives from (tenant, target, evidence hash): the same evidence names the
same proposal, so it is raised once whoever raises it (C43).
"""

from datetime import datetime
from typing import Any
from uuid import UUID, uuid5

from eventsourcing.domain import Aggregate, event

from contracts.errors import Conflict, InvalidTransition, Refused
from contracts.learning import ProposalState, RaiseProposal
from contracts.scalars import is_blank
from services.store.sealing import Personal

PROPOSAL_NAMESPACE = UUID("b3f1a7d2-5c64-5e09-8a1b-9d7e6f5c4b32")
RELEASED = "Accepted with its release"  # the requested "state" of a release id
APPROVED = "InReview (approved, waiting for its release)"  # decisions D54


def proposal_id_for(tenant_id: str, target_asset_id: str, evidence_hash: str) -> UUID:
    """C43: idempotent on targetAssetId + evidenceHash (within the tenant)."""
    return uuid5(PROPOSAL_NAMESPACE, f"{tenant_id}/{target_asset_id}/{evidence_hash}")


def refuse(current: ProposalState | str, requested: ProposalState | str) -> InvalidTransition:
    """C34: a refused transition names both states."""
    return InvalidTransition(
        f"a proposal in state {current} cannot move to {requested}",
        current=str(current),
        requested=str(requested),
    )


class LearningProposal(Aggregate):
    class Raised(Aggregate.Created):
        tenant_id: str
        kind: str
        target_asset_id: str
        target_version: str | None
        evidence_hash: str
        evidence: list[dict[str, Any]]
        evidence_refs: list[str]
        summary_ref: str
        expected_effect: dict[str, Any] | None
        profile: str

    class PickedUp(Aggregate.Event):
        personal = Personal(names={"reviewed_by": "Reviewer"})  # their own keys, D130

        tenant_id: str
        reviewed_by: str

    class Accepted(Aggregate.Event):
        personal = Personal(names={"reviewed_by": "Reviewer"})  # their own keys, D130

        """Kept for the proposals accepted before decisions D54; no longer appended."""

        tenant_id: str
        reviewed_by: str

    class ApprovedForRelease(Aggregate.Event):
        personal = Personal(names={"reviewed_by": "Reviewer"})  # their own keys, D130

        """The maintainer's accept (decisions D54): the proposal stays InReview until its
        Draft release exists."""

        tenant_id: str
        reviewed_by: str

    class DraftReleaseRequested(Aggregate.Event):
        personal = Personal(names={"requested_by": "AssetMaintainer"})  # their own keys, D130

        tenant_id: str
        kind: str
        target_asset_id: str
        target_version: str | None
        summary_ref: str
        evidence_refs: list[str]
        requested_by: str

    class Rejected(Aggregate.Event):
        # The reviewer's reason is their words: under their key, with their id (D130).
        personal = Personal(text=("reason",), identity=("reviewed_by",), person="reviewed_by")

        tenant_id: str
        reviewed_by: str
        reason: str

    class Superseded(Aggregate.Event):
        tenant_id: str
        superseded_by: str

    class ReleaseRecorded(Aggregate.Event):
        tenant_id: str
        release_id: str

    def __init__(
        self,
        tenant_id: str,
        kind: str,
        target_asset_id: str,
        target_version: str | None,
        evidence_hash: str,
        evidence: list[dict[str, Any]],
        evidence_refs: list[str],
        summary_ref: str,
        expected_effect: dict[str, Any] | None,
        profile: str,
    ) -> None:
        self.tenant_id = tenant_id
        self.kind = kind
        self.target_asset_id = target_asset_id
        self.target_version = target_version
        self.evidence_hash = evidence_hash
        self.evidence = evidence
        self.evidence_refs = evidence_refs
        self.summary_ref = summary_ref
        self.expected_effect = expected_effect
        self.profile = profile
        self.state = ProposalState.proposed
        self.reviewed_by: str | None = None
        self.release_id: str | None = None
        self.approved = False  # decisions D54: accepted by a maintainer, waiting for a release

    @classmethod
    def raise_(cls, *, tenant_id: str, command: RaiseProposal, at: datetime) -> "LearningProposal":
        """C29: never without evidence (the generator gates on MinEvidenceItems first)."""
        if not command.evidence:
            raise Refused("a proposal without evidence is never raised", field="evidence")
        evidence = [item.model_dump(mode="json", by_alias=True) for item in command.evidence]
        effect = command.expected_effect
        return cls._create(
            cls.Raised,
            id=proposal_id_for(tenant_id, command.target_asset_id, command.evidence_hash),
            timestamp=at,
            tenant_id=tenant_id,
            kind=command.kind.value,
            target_asset_id=command.target_asset_id,
            target_version=command.target_version,
            evidence_hash=command.evidence_hash,
            evidence=evidence,
            evidence_refs=[item.evidence_id for item in command.evidence],
            summary_ref=command.summary_ref,
            expected_effect=None if effect is None else effect.model_dump(by_alias=True),
            profile=command.profile,
        )

    def pick_up(self, *, by: str, at: datetime) -> None:
        """C34: Proposed → InReview (MaintainerPicksUp)."""
        if self.state == ProposalState.in_review:
            return  # the same request again (C35)
        if self.state != ProposalState.proposed:
            raise refuse(self.state, ProposalState.in_review)
        self._picked_up(tenant_id=self.tenant_id, reviewed_by=by, timestamp=at)

    @event(PickedUp)
    def _picked_up(self, tenant_id: str, reviewed_by: str, timestamp: datetime) -> None:
        self.state = ProposalState.in_review
        self.reviewed_by = reviewed_by

    def accept(self, *, by: str, at: datetime) -> None:
        """C34, decisions D54: the maintainer's accept approves the proposal and requests its
        Draft release (C32); the move to Accepted waits for the release (``record_release``)."""
        if self.state == ProposalState.accepted or self.approved:
            return  # the same request again (C35)
        if self.state != ProposalState.in_review:
            raise refuse(self.state, ProposalState.accepted)
        self._approved(tenant_id=self.tenant_id, reviewed_by=by, timestamp=at)
        self._draft_release_requested(
            tenant_id=self.tenant_id,
            kind=self.kind,
            target_asset_id=self.target_asset_id,
            target_version=self.target_version,
            summary_ref=self.summary_ref,
            evidence_refs=self.evidence_refs,
            requested_by=by,
            timestamp=at,
        )

    @event(ApprovedForRelease)
    def _approved(self, tenant_id: str, reviewed_by: str, timestamp: datetime) -> None:
        self.approved = True
        self.reviewed_by = reviewed_by

    @event(Accepted)
    def _accepted(self, tenant_id: str, reviewed_by: str, timestamp: datetime) -> None:
        self.state = ProposalState.accepted  # a proposal accepted before decisions D54
        self.reviewed_by = reviewed_by

    @event(DraftReleaseRequested)
    def _draft_release_requested(
        self,
        tenant_id: str,
        kind: str,
        target_asset_id: str,
        target_version: str | None,
        summary_ref: str,
        evidence_refs: list[str],
        requested_by: str,
        timestamp: datetime,
    ) -> None:
        pass  # the request is the event; the registry answers with the release id

    def reject(self, *, by: str, reason: str | None, at: datetime) -> None:
        """C34: InReview → Rejected; C33: a reason is required."""
        if self.state == ProposalState.rejected:
            return
        if self.state != ProposalState.in_review:
            raise refuse(self.state, ProposalState.rejected)
        if self.approved:  # decisions D54: decided already, its release is on its way
            raise refuse(APPROVED, ProposalState.rejected)
        if reason is None or is_blank(reason):  # zero-width characters say nothing either
            raise Refused("rejecting a proposal requires a reason (SPEC C33)", field="reason")
        self._rejected(tenant_id=self.tenant_id, reviewed_by=by, reason=reason, timestamp=at)

    @event(Rejected)
    def _rejected(self, tenant_id: str, reviewed_by: str, reason: str, timestamp: datetime) -> None:
        self.state = ProposalState.rejected
        self.reviewed_by = reviewed_by

    def supersede(self, *, by: UUID, at: datetime) -> bool:
        """C34: Proposed → Superseded by a newer proposal on the same target. A proposal a
        maintainer already took up is left alone (answers False): the newer one stands
        beside it."""
        if self.state != ProposalState.proposed:
            return False
        self._superseded(tenant_id=self.tenant_id, superseded_by=str(by), timestamp=at)
        return True

    @event(Superseded)
    def _superseded(self, tenant_id: str, superseded_by: str, timestamp: datetime) -> None:
        self.state = ProposalState.superseded

    def record_release(self, *, release_id: str, at: datetime) -> None:
        """C32, C34 (ReleaseCandidateOpened), decisions D54: the Draft release's id becomes
        resultingReleaseId, once, and an approved proposal becomes Accepted with it."""
        if not (self.approved or self.state == ProposalState.accepted):
            raise refuse(self.state, RELEASED)
        if self.release_id == release_id:
            return
        if self.release_id is not None:
            raise Conflict(
                f"the proposal's release is {self.release_id} already",
                field="releaseId",
                resultingReleaseId=self.release_id,
            )
        self._release_recorded(tenant_id=self.tenant_id, release_id=release_id, timestamp=at)

    @event(ReleaseRecorded)
    def _release_recorded(self, tenant_id: str, release_id: str, timestamp: datetime) -> None:
        self.release_id = release_id
        self.state = ProposalState.accepted
