"""Proposals from every kind of evidence (SPEC C27, C28, C29, C40, C41, C42; decisions D55).

For each kind: one item below MinEvidenceItems raises nothing; at MinEvidenceItems exactly one
proposal of the expected kind on the expected target, and a run after it raises nothing more.
Each neighbour event and each piece of feedback goes through the command bus on a real
PostgreSQL; the generator reads the evidence clusters read model the follower keeps.
"""

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import pytest

from contracts.feedback import RecordFeedback
from contracts.learning import PickUpProposal
from contracts.neighbours import DriftDetected, RunCompleted, SkillCandidateProposed
from contracts.reports import ReviewReport, ReviewReportCommand
from services.bus.issued import Issued
from services.evals.domain import EvalCase
from services.evals.lift import Definition
from services.learning.domain import LearningProposal
from services.processes.bootstrap import Runtime
from services.store.artifacts import put_artifact
from tests.conftest import Keys
from tests.integration.test_digest import send, submit
from tests.integration.test_learning import (
    NOW,
    ORDER,
    failed_evaluation,
    generator,
    neighbour,
    tenant_of,
)

MIN = 3  # SPEC C29, C47: the default
AGENT = "Office/Coach"
AGENT_ASSET = "Office_Coach"  # an agent path as an asset id (W43)
SKILL = "skill-summarise"

Add = Callable[[Runtime, str, int], Awaitable[None]]


@pytest.fixture
async def live(runtime: Runtime) -> Runtime:
    """The evidence clusters the generator reads, kept by the follower as in the service."""
    runtime.start_projections(["learning_proposals"])
    return runtime


async def run_completed(runtime: Runtime, tenant: str, n: int) -> str:
    """Run ``n`` of the agent, harvested (C24); answers the run's id."""
    output = await put_artifact(runtime.pool, tenant, f"answer {n}".encode(), "text/plain")
    question = await put_artifact(runtime.pool, tenant, f"question {n}".encode(), "text/plain")
    run_id = f"run-{n}"
    event = RunCompleted.model_validate(
        {"runId": run_id, "agentId": AGENT, "agentVersion": "2.0", "outcome": "succeeded",
         "inputRef": question, "outputRef": output, "completedAt": NOW.isoformat()},
        extra="allow",
    )  # fmt: skip
    await neighbour(runtime, tenant, event, f"run-{n}")
    return run_id


async def feedback(
    runtime: Runtime, tenant: str, subject_kind: str, ref: str, kind: str = "rating"
) -> None:
    body: dict[str, Any] = {"projectId": "p", "subjectKind": subject_kind, "subjectRef": ref,
                            "kind": kind}  # fmt: skip
    if kind == "rating":
        body["rating"] = 1
    if kind == "correction":
        body["correctedArtifactRef"] = await put_artifact(
            runtime.pool, tenant, f"fixed {ref}".encode(), "text/plain"
        )
    command = RecordFeedback.model_validate(body)
    await runtime.bus.execute(Issued(command, tenant, "rita", uuid.uuid4().hex, NOW))


async def add_evaluation(runtime: Runtime, tenant: str, n: int) -> None:
    await neighbour(runtime, tenant, failed_evaluation(n, AGENT_ASSET), f"ev-{n}")


async def add_drift(runtime: Runtime, tenant: str, n: int) -> None:
    drift = DriftDetected.model_validate(
        {"driftId": f"d-{n}", "targetAssetId": AGENT_ASSET, "metric": "groundedness",
         "baseline": 0.8, "observed": 0.6, "detectedAt": (NOW - timedelta(hours=n)).isoformat()}
    )  # fmt: skip
    await neighbour(runtime, tenant, drift, f"drift-{n}")


async def add_skill_candidate(runtime: Runtime, tenant: str, n: int) -> None:
    candidate = SkillCandidateProposed.model_validate(
        {"candidateId": f"mem-{n}", "skillId": SKILL, "reinforcements": 4 + n,
         "proposedAt": NOW.isoformat()}
    )  # fmt: skip
    await neighbour(runtime, tenant, candidate, f"skill-{n}")


async def add_run_feedback(runtime: Runtime, tenant: str, n: int) -> None:
    await feedback(runtime, tenant, "run", await run_completed(runtime, tenant, n))


async def add_feedback_before_its_run(runtime: Runtime, tenant: str, n: int) -> None:
    """The feedback first, its run after: it waits for the run, then joins the cluster."""
    await feedback(runtime, tenant, "run", f"run-{n}", kind="escalation")
    await run_completed(runtime, tenant, n)


async def add_attempt_feedback(runtime: Runtime, tenant: str, n: int) -> None:
    run_id = await run_completed(runtime, tenant, n)
    await feedback(runtime, tenant, "attempt", f"{run_id}#2")


async def add_artifact_feedback(runtime: Runtime, tenant: str, n: int) -> None:
    await run_completed(runtime, tenant, n)
    output = await put_artifact(runtime.pool, tenant, f"answer {n}".encode(), "text/plain")
    await feedback(runtime, tenant, "artifact", output)


async def add_memory_feedback(runtime: Runtime, tenant: str, n: int) -> None:
    """Feedback on a procedural memory: the skill candidate that reinforced it names its
    skill (the candidate counts too, so the cluster holds both)."""
    if n == 0:
        await add_skill_candidate(runtime, tenant, 100)
        return
    await feedback(runtime, tenant, "memory", "mem-100")


async def add_report(runtime: Runtime, tenant: str, n: int) -> None:
    await submit(runtime, tenant, NOW - timedelta(days=n), agent=AGENT)


async def add_eval_case_failure(runtime: Runtime, tenant: str, n: int) -> None:
    """A lifted eval case of the agent whose run failed (W43: the case names its agent)."""
    case = EvalCase.create(
        case_id=uuid.uuid4(), tenant_id=tenant, source=uuid.uuid4(), agent_path=AGENT, at=NOW
    )
    case.lift(Definition(AGENT, f"prompt {n}", [], [], [], None), at=NOW)
    case.record_run(
        run_id=uuid.uuid4(), ran_by="alice", model=None, effort="medium", threads=[],
        summary={"passed": False, "reasons": ["did not look it up"]}, at=NOW,
    )  # fmt: skip
    await asyncio.to_thread(runtime.store.save, case)


async def add_correction_for_a_missing_task(runtime: Runtime, tenant: str, n: int) -> None:
    """A correction with a corrected artifact on an attempt: no task of the agent's dataset."""
    run_id = await run_completed(runtime, tenant, n)
    await feedback(runtime, tenant, "attempt", f"{run_id}#1", kind="correction")


KINDS: dict[str, tuple[Add, str, str]] = {  # evidence → (add one, proposal kind, target)
    "failed-evaluation": (add_evaluation, "prompt-improvement", AGENT_ASSET),
    "drift-improvement": (add_drift, "threshold-change", AGENT_ASSET),
    "drift-re-evaluation": (add_drift, "re-evaluation", AGENT_ASSET),
    "skill-candidate": (add_skill_candidate, "skill-improvement", SKILL),
    "feedback-on-runs": (add_run_feedback, "prompt-improvement", AGENT_ASSET),
    "feedback-before-its-run": (add_feedback_before_its_run, "prompt-improvement", AGENT_ASSET),
    "feedback-on-attempts": (add_attempt_feedback, "prompt-improvement", AGENT_ASSET),
    "feedback-on-artifacts": (add_artifact_feedback, "prompt-improvement", AGENT_ASSET),
    "feedback-on-memories": (add_memory_feedback, "skill-improvement", SKILL),
    "wrong-answer-reports": (add_report, "prompt-improvement", AGENT_ASSET),
    "eval-case-failures": (add_eval_case_failure, "prompt-improvement", AGENT_ASSET),
    "corrections-for-missing-tasks": (
        add_correction_for_a_missing_task, "dataset-addition", f"agent:{AGENT}",
    ),
}  # fmt: skip


def of_kind(runtime: Runtime, raised: list[uuid.UUID], kind: str) -> list[LearningProposal]:
    proposals = [runtime.store.repository.get(pid) for pid in raised]
    return [p for p in proposals if p.kind == kind]


@pytest.mark.parametrize("evidence", list(KINDS))
async def test_each_kind_of_evidence_raises_exactly_one_proposal_at_min_evidence_items(
    live: Runtime, keys: Keys, evidence: str
) -> None:
    add, kind, target = KINDS[evidence]
    tenant = tenant_of(keys)
    gen = generator(live)
    for n in range(MIN - 1):
        await add(live, tenant, n)
    below = await gen.run(ORDER)
    assert of_kind(live, below.raised, kind) == []  # C29: fewer wait
    await add(live, tenant, MIN - 1)
    at = await gen.run(ORDER)
    [proposal] = of_kind(live, at.raised, kind)
    assert proposal.target_asset_id == target
    assert len(proposal.evidence_refs) == MIN
    assert at.failed == []
    again = await gen.run(ORDER)
    assert of_kind(live, again.raised, kind) == []  # C43: once


async def test_drift_raises_a_re_evaluation_and_an_improvement_proposal(
    live: Runtime, keys: Keys
) -> None:
    """C40: the same drift evidence, two proposals on the same asset, each its own id."""
    tenant = tenant_of(keys)
    for n in range(MIN):
        await add_drift(live, tenant, n)
    report = await generator(live).run(ORDER)
    proposals = [live.store.repository.get(pid) for pid in report.raised]
    assert sorted(p.kind for p in proposals) == ["re-evaluation", "threshold-change"]
    assert {tuple(sorted(p.evidence_refs)) for p in proposals} == {
        tuple(f"drift:d-{n}" for n in range(MIN))
    }


async def test_a_correction_on_a_run_the_dataset_holds_adds_no_task(
    live: Runtime, keys: Keys
) -> None:
    """C24, C27: a run is a task of its agent's dataset already; its corrections are
    improvement evidence, never a dataset addition."""
    tenant = tenant_of(keys)
    for n in range(MIN):
        await feedback(live, tenant, "run", await run_completed(live, tenant, n), "correction")
    report = await generator(live).run(ORDER)
    assert [p.kind for p in of_kind(live, report.raised, "dataset-addition")] == []
    assert len(of_kind(live, report.raised, "prompt-improvement")) == 1


async def test_picking_up_a_re_evaluation_leaves_the_improvement_evidence_unspent(
    live: Runtime, keys: Keys
) -> None:
    """Evidence is spent per track: a maintainer taking up one proposal of a drift leaves the
    other's evidence where it was; new drift then supersedes only its own track's proposal."""
    tenant = tenant_of(keys)
    for n in range(MIN):
        await add_drift(live, tenant, n)
    gen = generator(live)
    first = await gen.run(ORDER)
    [re_evaluation] = of_kind(live, first.raised, "re-evaluation")
    [improvement] = of_kind(live, first.raised, "threshold-change")
    pick_up = PickUpProposal(proposal_id=re_evaluation.id)
    await live.bus.execute(Issued(pick_up, tenant, "maria", uuid.uuid4().hex, NOW))
    await add_drift(live, tenant, MIN)
    second = await gen.run(ORDER)
    [newer] = of_kind(live, second.raised, "threshold-change")
    assert len(newer.evidence_refs) == MIN + 1  # the improvement track kept its evidence
    # The re-evaluation track's first three are spent: one new item waits for two more (C29).
    assert of_kind(live, second.raised, "re-evaluation") == []
    older: LearningProposal = live.store.repository.get(improvement.id)
    assert older.state == "Superseded"
    taken: LearningProposal = live.store.repository.get(re_evaluation.id)
    assert taken.state == "InReview"


async def test_a_report_closed_as_wont_fix_is_no_longer_evidence(live: Runtime, keys: Keys) -> None:
    """C28: a WontFix says the report was not a fault of the agent: the cluster loses it."""
    tenant = tenant_of(keys)
    reports = [await submit(live, tenant, NOW - timedelta(days=n), agent=AGENT) for n in range(3)]
    for status in ("Triaged", "WontFix"):
        review = ReviewReport.model_validate({"status": status, "reason": "works as designed"})
        await send(live, tenant, ReviewReportCommand(report_id=reports[0], review=review), NOW)
    report = await generator(live).run(ORDER)
    assert report.raised == []  # two left: below MinEvidenceItems
    await submit(live, tenant, NOW, agent=AGENT)
    [proposal] = of_kind(live, (await generator(live).run(ORDER)).raised, "prompt-improvement")
    assert f"report:{reports[0]}" not in proposal.evidence_refs
