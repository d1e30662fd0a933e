"""Evidence clustered per (tenant, target asset), gated and named: pure, no I/O (C29, C42, C43).

The generator reads the facts (recorded evidence, feedback clusters from the read models) and
the proposals raised so far, hands them in, and raises what comes out; so every edge is a
unit test and the same facts always give the same clusters and hashes.

A cluster holds the target's evidence that no proposal a maintainer took up (InReview,
Accepted, Rejected) cites yet: evidence cited only by proposals still Proposed, or Superseded,
stays in the cluster, so new evidence on the same target makes a new hash, a new proposal,
and the older Proposed one is superseded (C34); evidence a maintainer has seen is spent.

Kind from the evidence (C27), first rule that holds:

| the cluster                                         | kind                         |
|-----------------------------------------------------|------------------------------|
| a skill candidate, or the target is a skill         | skill-improvement            |
| the target is a context strategy                    | context-strategy-improvement |
| the target is a profile                             | profile-change               |
| drift only (no failure, no feedback)                | threshold-change             |
| anything else (failed gates, regressions, feedback) | prompt-improvement           |

That is the ``improvement`` track. Two more tracks cluster apart, on their own proposals
(decisions D55): ``re-evaluation`` (drift, C40: the asset evaluated again, beside its
improvement) and ``dataset-addition`` (corrections carrying a corrected artifact for a task
the agent's dataset lacks, on that dataset, C27). A track other than ``improvement`` is named
in the evidence hash, so the same evidence on two tracks names two proposals.
"""

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from contracts.learning import EvidenceItem, EvidenceOrigin, ProposalKind

DEFAULT_MIN_EVIDENCE_ITEMS = 3  # SPEC C29, C47
IMPROVEMENT, RE_EVALUATION, DATASET_ADDITION = "improvement", "re-evaluation", "dataset-addition"
TRACK_KINDS = {
    RE_EVALUATION: ProposalKind.re_evaluation,
    DATASET_ADDITION: ProposalKind.dataset_addition,
}
SPENT_STATES = frozenset({"InReview", "Accepted", "Rejected"})


@dataclass(frozen=True)
class Fact:
    """One item of evidence about one target asset of one tenant."""

    tenant_id: str
    target_asset_id: str
    target_kind: str
    target_version: str | None
    item: EvidenceItem


@dataclass(frozen=True)
class Known:
    """A proposal raised before, as the generator needs it."""

    proposal_id: str
    tenant_id: str
    target_asset_id: str
    state: str
    evidence_refs: tuple[str, ...]


@dataclass(frozen=True)
class Cluster:
    tenant_id: str
    target_asset_id: str
    target_kind: str
    target_version: str | None
    items: tuple[EvidenceItem, ...]  # sorted by evidence id
    track: str = IMPROVEMENT

    @property
    def evidence_hash(self) -> str:
        return evidence_hash((item.evidence_id for item in self.items), self.track)

    @property
    def kind(self) -> ProposalKind:
        if self.track in TRACK_KINDS:
            return TRACK_KINDS[self.track]
        return kind_of(self.target_kind, [item.origin for item in self.items])


def evidence_hash(evidence_ids: Iterable[str], track: str = IMPROVEMENT) -> str:
    """C43: the hash of the sorted evidence ids; the order they were found in never matters.
    A track other than ``improvement`` leads the hashed text (decisions D55)."""
    lines = sorted(set(evidence_ids))
    if track != IMPROVEMENT:
        lines.insert(0, f"track:{track}")
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def kind_of(target_kind: str, origins: Sequence[EvidenceOrigin]) -> ProposalKind:
    """C27: the table in the module docstring."""
    if EvidenceOrigin.skill_candidate in origins or target_kind == "skill":
        return ProposalKind.skill_improvement
    if target_kind == "context-strategy":
        return ProposalKind.context_strategy_improvement
    if target_kind == "profile":
        return ProposalKind.profile_change
    if origins and all(origin == EvidenceOrigin.drift for origin in origins):
        return ProposalKind.threshold_change
    return ProposalKind.prompt_improvement


def spent(known: Iterable[Known]) -> set[tuple[str, str]]:
    """(tenant, evidence id) pairs cited by a proposal a maintainer took up."""
    return {
        (proposal.tenant_id, ref)
        for proposal in known
        if proposal.state in SPENT_STATES
        for ref in proposal.evidence_refs
    }


def clusters(
    facts: Iterable[Fact], known: Iterable[Known], track: str = IMPROVEMENT
) -> list[Cluster]:
    """C42: the unspent evidence per (tenant, target), one item per evidence id, in a stable
    order (tenant, target). The version is the one the latest item names."""
    used = spent(known)
    grouped: dict[tuple[str, str], dict[str, Fact]] = defaultdict(dict)
    for fact in facts:
        if (fact.tenant_id, fact.item.evidence_id) in used:
            continue
        grouped[(fact.tenant_id, fact.target_asset_id)].setdefault(fact.item.evidence_id, fact)
    found = []
    for (tenant_id, target), by_id in sorted(grouped.items()):
        mine = sorted(by_id.values(), key=lambda f: f.item.evidence_id)
        latest = max(mine, key=lambda f: (f.item.observed_at, f.item.evidence_id))
        named = [f for f in mine if f.target_kind != "agent"]  # a neighbour that said more
        found.append(
            Cluster(
                tenant_id=tenant_id,
                target_asset_id=target,
                target_kind=(named[0] if named else latest).target_kind,
                target_version=latest.target_version
                or next((f.target_version for f in reversed(mine) if f.target_version), None),
                items=tuple(f.item for f in mine),
                track=track,
            )
        )
    return found


def ready(cluster: Cluster, min_items: int) -> bool:
    """C29: at least MinEvidenceItems items; fewer wait for more."""
    return len(cluster.items) >= max(1, min_items)


def superseded_by_new(cluster: Cluster, known: Iterable[Known]) -> list[str]:
    """C34: the target's proposals still Proposed, which a new proposal supersedes."""
    return sorted(
        proposal.proposal_id
        for proposal in known
        if proposal.tenant_id == cluster.tenant_id
        and proposal.target_asset_id == cluster.target_asset_id
        and proposal.state == "Proposed"
    )
