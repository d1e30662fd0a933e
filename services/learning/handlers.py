"""Command handlers of the learning context: load, decide, hand back for the bus to append.

The three neighbour events are commands here, as the domain names them:
EvaluationCompleted is RaiseFromEvaluation (C39), DriftDetected is RaiseFromDrift (C40),
SkillCandidateProposed is RaiseSkillProposal (C41). Each records its evidence once; the
proposal itself is raised by the generator, once a cluster holds enough evidence (C29, C42).
"""

from contextlib import suppress
from dataclasses import dataclass
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError

from contracts.learning import (
    DecideProposalCommand,
    DraftReleaseOpened,
    EvidenceItem,
    PickUpProposal,
    ProposalState,
    RaiseProposal,
    RecordReleaseCommand,
)
from contracts.neighbours import DriftDetected, EvaluationCompleted, SkillCandidateProposed
from services.bus.decisions import Decision
from services.bus.issued import Issued
from services.learning.domain import LearningProposal, proposal_id_for
from services.learning.evidence import (
    Evidence,
    drift_item,
    evaluation_counts,
    evaluation_item,
    evidence_id_for,
    skill_item,
)
from services.permissions.agent_register import require_maintainer
from services.store.event_store import EventStore
from services.store.owners import load_owned


@dataclass(frozen=True)
class EvidenceState:
    evidence_id: str
    counts: bool
    recorded: bool  # False: recorded before (the same event again)


@dataclass(frozen=True)
class ProposalShown:
    proposal_id: UUID
    state: ProposalState
    reviewed_by: str | None
    release_id: str | None
    created: bool = False


def shown(proposal: LearningProposal, created: bool = False) -> ProposalShown:
    return ProposalShown(
        proposal.id, proposal.state, proposal.reviewed_by, proposal.release_id, created
    )


def item_of(command: object) -> tuple[EvidenceItem, str, str, str | None, bool]:
    """The evidence a neighbour event is: item, target, target kind, version, counts."""
    if isinstance(command, SkillCandidateProposed):
        return skill_item(command), command.skill_id, "skill", command.target_version, True
    if isinstance(command, EvaluationCompleted):
        item, counts = evaluation_item(command), evaluation_counts(command)
    else:
        assert isinstance(command, DriftDetected)
        item, counts = drift_item(command), True
    target = command.target_asset_id, command.target_kind.value, command.target_version
    return item, *target, counts


def evidence_created(issued: Issued) -> UUID:
    item = item_of(issued.command)[0]
    return evidence_id_for(issued.tenant_id, item.evidence_id)


def record_evidence(store: EventStore, issued: Issued) -> Decision:
    """RaiseFromEvaluation, RaiseFromDrift, RaiseSkillProposal: the event as evidence, once
    (a repeat, under whatever CloudEvent id, finds it and appends nothing)."""
    item, target, kind, version, counts = item_of(issued.command)
    aggregate_id = evidence_id_for(issued.tenant_id, item.evidence_id)
    if not issued.new:
        with suppress(AggregateNotFoundError):
            found: Evidence = store.repository.get(aggregate_id)
            return Decision([], EvidenceState(item.evidence_id, found.counts, recorded=False))
    evidence = Evidence.record(
        tenant_id=issued.tenant_id,
        target_asset_id=target,
        target_kind=kind,
        target_version=version,
        counts=counts,
        item=item,
        at=issued.at,
    )
    return Decision([evidence], EvidenceState(item.evidence_id, counts, recorded=True))


def proposal_created(issued: Issued) -> UUID:
    command = issued.command
    assert isinstance(command, RaiseProposal)
    return proposal_id_for(issued.tenant_id, command.target_asset_id, command.evidence_hash)


def raise_proposal(store: EventStore, issued: Issued) -> Decision:
    """Raise once per (target, evidence hash) (C43) and supersede the target's proposals
    that are still Proposed (C34); one that a maintainer took up meanwhile stays."""
    command = issued.command
    assert isinstance(command, RaiseProposal)
    proposal_id = proposal_created(issued)
    if not issued.new:
        with suppress(AggregateNotFoundError):
            return Decision([], shown(store.repository.get(proposal_id)))
    proposal = LearningProposal.raise_(tenant_id=issued.tenant_id, command=command, at=issued.at)
    moved: list[LearningProposal] = []
    for older_id in command.supersedes:
        if older_id == proposal_id:
            continue
        older = load_proposal(store, issued.tenant_id, older_id)
        if older.supersede(by=proposal_id, at=issued.at):
            moved.append(older)
    return Decision([proposal, *moved], shown(proposal, created=True))


def load_proposal(store: EventStore, tenant_id: str, proposal_id: UUID) -> LearningProposal:
    proposal: LearningProposal = load_owned(store, tenant_id, proposal_id, "proposal")
    return proposal


def pick_up(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, PickUpProposal)
    proposal = load_proposal(store, issued.tenant_id, command.proposal_id)
    maintained(store, issued, proposal, "picking up this proposal")
    proposal.pick_up(by=issued.actor, at=issued.at)  # reviewedBy: the caller (C35)
    return Decision([proposal], shown(proposal))


def decide(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, DecideProposalCommand)
    proposal = load_proposal(store, issued.tenant_id, command.proposal_id)
    maintained(store, issued, proposal, "deciding this proposal")
    if command.decision == "accept":
        proposal.accept(by=issued.actor, at=issued.at)
    else:
        proposal.reject(by=issued.actor, reason=command.reason, at=issued.at)
    return Decision([proposal], shown(proposal))


def maintained(store: EventStore, issued: Issued, proposal: LearningProposal, what: str) -> None:
    """SPEC C52, decisions D23: a proposal is decided by a maintainer of its target, as the
    agent register names them (the target asset's id is the register's agent)."""
    require_maintainer(
        store, issued.tenant_id, issued.actor, issued.roles, proposal.target_asset_id, what
    )


def record_release(store: EventStore, issued: Issued) -> Decision:
    """The registry's answer, by callback or by its DraftReleaseOpened event (C32)."""
    command = issued.command
    assert isinstance(command, RecordReleaseCommand | DraftReleaseOpened)
    proposal = load_proposal(store, issued.tenant_id, command.proposal_id)
    proposal.record_release(release_id=command.release_id, at=issued.at)
    return Decision([proposal], shown(proposal))
