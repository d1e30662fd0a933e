"""What the generator reads: evidence and proposals from the store, feedback from read models.

- Recorded evidence (``Evidence.Recorded``, C39–C41) and the proposals raised so far are read
  from the event store itself, not from a read model: the generator then never decides on a
  view that lags, and a second generator sees what the first appended.
- Feedback clusters per target asset (C28, C42) come from the read models that hold them:
  submitted wrong-answer reports on an agent (the Inbox; a WontFix is no evidence), failed
  runs of eval cases (the eval cases' runs), and low ratings (≤ 2), corrections and
  escalations given on an evaluation whose target we know from its EvaluationCompleted.
  Feedback on a run, attempt, artifact or memory names no asset, so it cannot be clustered
  per asset here and is not read.

Every id is the fact's own (``report:<id>``, ``eval-run:<id>``, ``feedback:<id>``), so the same
facts always give the same evidence hash.
"""

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import asyncpg
from eventsourcing.utils import get_topic

from contracts.learning import EvidenceItem, EvidenceOrigin
from projections import eval_cases, feedback_list, inbox
from services.learning.clusters import Fact, Known
from services.learning.domain import LearningProposal
from services.learning.evidence import Evidence
from services.store.event_store import EventStore

PAGE = 1_000
FEEDBACK_READ_MODELS = (inbox.SCHEMA, eval_cases.SCHEMA, feedback_list.SCHEMA)
LOW_RATING = 2


def stored(store: EventStore, classes: Sequence[type]) -> list[Any]:
    """Every stored event of these classes, in log order (runs in a thread: the library is
    synchronous)."""
    topics = [get_topic(cls) for cls in classes]
    recorder, after, events = store.recorder, 0, []
    head = recorder.max_notification_id() or 0
    while after < head:
        page = list(
            recorder.select_notifications(
                start=after, limit=PAGE, stop=head, topics=topics, inclusive_of_start=False
            )
        )
        events += [store.mapper.to_domain_event(n) for n in page]
        if len(page) < PAGE:
            break
        after = page[-1].id
    return events


Evaluations = dict[tuple[str, str], Fact]  # (tenant, evidence id) → an evaluation's fact


@dataclass(frozen=True)
class Unreadable:
    """Evidence that does not read as an item (recorded before a door refused what it holds,
    or a read model's row of a shape no one foresaw): its target's cluster fails, every other
    one goes on."""

    tenant_id: str
    target_asset_id: str
    error: Exception


def recorded_evidence(store: EventStore) -> tuple[list[Fact], Evaluations, list[Unreadable]]:
    """The neighbours' events that count as evidence (C39: a passing evaluation does not),
    every evaluation seen, passing or not, by its evidence id (feedback on one names its
    target), and the evidence that cannot be read."""
    counting, evaluations, unreadable = [], {}, []
    for e in stored(store, [Evidence.Recorded]):
        try:
            item = EvidenceItem.model_validate(e.item)
        except ValueError as error:  # pydantic's ValidationError is one
            unreadable.append(Unreadable(e.tenant_id, e.target_asset_id, error))
            continue
        fact = Fact(
            tenant_id=e.tenant_id,
            target_asset_id=e.target_asset_id,
            target_kind=e.target_kind,
            target_version=e.target_version,
            item=item,
        )
        if e.counts:
            counting.append(fact)
        if fact.item.evidence_id.startswith("evaluation:"):
            evaluations[(fact.tenant_id, fact.item.evidence_id)] = fact
    return counting, evaluations, unreadable


def known_proposals(store: EventStore) -> list[Known]:
    """Every proposal raised so far, folded to its current state."""
    raised: dict[Any, Any] = {}
    states: dict[Any, str] = {}
    moves = {
        LearningProposal.PickedUp: "InReview",
        LearningProposal.Accepted: "Accepted",
        LearningProposal.ApprovedForRelease: "InReview",
        LearningProposal.ReleaseRecorded: "Accepted",
        LearningProposal.Rejected: "Rejected",
        LearningProposal.Superseded: "Superseded",
    }
    for e in stored(store, [LearningProposal.Raised, *moves]):
        if isinstance(e, LearningProposal.Raised):
            raised[e.originator_id], states[e.originator_id] = e, "Proposed"
        else:
            states[e.originator_id] = moves[type(e)]
    return [
        Known(str(pid), e.tenant_id, e.target_asset_id, states[pid], tuple(e.evidence_refs))
        for pid, e in raised.items()
    ]


def agent_id_of(agent: str) -> str:
    """An agent path as an asset id: every ``/`` as ``_`` (as eval cases name it, W43)."""
    return agent.replace("/", "_")


async def feedback_evidence(
    pool: asyncpg.Pool, evaluations: Evaluations
) -> tuple[list[Fact], list[Unreadable]]:
    """C28: reports, eval-case failures and feedback on evaluations, per target asset; and the
    rows that do not read as evidence (each fails its own target's cluster only)."""
    facts: list[Fact] = []
    unreadable: list[Unreadable] = []

    def read(tenant_id: str, target: str, fact: Callable[[], Fact]) -> None:
        try:
            facts.append(fact())
        except (ValueError, TypeError) as error:  # pydantic's ValidationError is a ValueError
            unreadable.append(Unreadable(tenant_id, target, error))

    for r in await inbox.submitted_on_known_agents(pool):
        read(r["tenant_id"], agent_id_of(r["agent"]), partial(report_fact, r))
    for r in await eval_cases.failed_runs(pool):
        read(r["tenant_id"], agent_id_of(r["agent"]), partial(eval_run_fact, r))
    for f in await feedback_list.low_on_evaluations(pool, LOW_RATING):
        evaluation = evaluations.get((f["tenant_id"], f"evaluation:{f['subject_ref']}"))
        if evaluation is None:
            continue  # an evaluation we never saw: no asset to cluster it on
        read(f["tenant_id"], evaluation.target_asset_id, partial(feedback_fact, f, evaluation))
    return facts, unreadable


def report_fact(r: asyncpg.Record) -> Fact:
    return agent_fact(
        r["tenant_id"],
        r["agent"],
        EvidenceItem(
            evidence_id=f"report:{r['report_id']}",
            origin=EvidenceOrigin.wrong_answer,
            note=f"wrong-answer report ({r['kind'] or 'no kind'}, {r['status']})",
            observed_at=r["submitted_at"],
        ),
    )


def eval_run_fact(r: asyncpg.Record) -> Fact:
    summary = asyncpg_json(r["summary"])
    reasons = ", ".join(summary.get("reasons") or []) or "failed"
    return agent_fact(
        r["tenant_id"],
        r["agent"],
        EvidenceItem(
            evidence_id=f"eval-run:{r['run_id']}",
            origin=EvidenceOrigin.eval_case_failure,
            metric="looked_rate" if summary.get("looked_rate") is not None else None,
            value=summary.get("looked_rate"),
            note=f"eval case {r['ref']} failed: {reasons}",
            observed_at=r["recorded_at"],
        ),
    )


def feedback_fact(f: asyncpg.Record, evaluation: Fact) -> Fact:
    rating = f" {f['rating']}" if f["rating"] is not None else ""
    return Fact(
        tenant_id=f["tenant_id"],
        target_asset_id=evaluation.target_asset_id,
        target_kind=evaluation.target_kind,
        target_version=evaluation.target_version,
        item=EvidenceItem(
            evidence_id=f"feedback:{f['feedback_id']}",
            origin=EvidenceOrigin.feedback,
            note=f"{f['kind']}{rating} on evaluation {f['subject_ref']}",
            observed_at=f["given_at"],
        ),
    )


def agent_fact(tenant_id: str, agent: str, item: EvidenceItem) -> Fact:
    return Fact(tenant_id, agent_id_of(agent), "agent", None, item)


def asyncpg_json(value: Any) -> dict[str, Any]:
    loaded = json.loads(value) if isinstance(value, str) else value
    return loaded if isinstance(loaded, dict) else {}
