"""Evidence, clusters, the MinEvidenceItems gate, kinds and the structured drafter: pure rules
(SPEC C27–C30, C39–C47)."""

import json
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import pytest

from contracts.learning import EvidenceItem, EvidenceOrigin, ProposalKind
from contracts.neighbours import DriftDetected, EvaluationCompleted, SkillCandidateProposed
from services.learning.clusters import (
    Cluster,
    Fact,
    Known,
    clusters,
    evidence_hash,
    kind_of,
    ready,
    superseded_by_new,
)
from services.learning.drafting import (
    COUNT_METRIC,
    DrafterUnavailable,
    ModelDrafter,
    StructuredDrafter,
    drafter_for,
    expected_effect,
)
from services.learning.evidence import evaluation_counts, evaluation_item
from services.learning.handlers import item_of
from services.learning.settings import LearningSettings
from services.scheduling.due import due, parse_order
from services.scheduling.orders import RaiseProposals

AT = datetime(2026, 11, 30, 6, tzinfo=UTC)


def evaluation(n: int, **changes: Any) -> EvaluationCompleted:
    data = {
        "evaluationId": f"ev-{n}",
        "targetAssetId": "agent-1",
        "targetVersion": "v3",
        "passed": False,
        "gates": [
            {
                "name": "grounded",
                "passed": False,
                "metric": "groundedness",
                "value": 0.5 + n / 128,
                "threshold": 0.8,
            }
        ],
        "completedAt": (AT + timedelta(minutes=n)).isoformat(),
        **changes,
    }
    return EvaluationCompleted.model_validate(data)


def fact(n: int, tenant: str = "t", target: str = "agent-1", **item: Any) -> Fact:
    evidence = EvidenceItem.model_validate(
        {
            "evidenceId": f"evaluation:ev-{n}",
            "origin": "failed-evaluation",
            "observedAt": AT.isoformat(),
            **item,
        }
    )
    return Fact(tenant, target, "agent", "v3", evidence)


def test_an_evaluation_counts_only_with_failed_gates_or_regressions() -> None:  # C39
    assert evaluation_counts(evaluation(1))
    passing = evaluation(1, passed=True, gates=[{"name": "g", "passed": True}])
    assert not evaluation_counts(passing)
    assert evaluation_item(passing).origin == EvidenceOrigin.passed_evaluation
    regressed = evaluation(
        1, passed=True, gates=[], regressions=[{"metric": "m", "from": 0.9, "to": 0.7}]
    )
    assert evaluation_counts(regressed)
    assert evaluation_item(regressed).baseline == 0.9


def test_each_neighbour_event_is_evidence_on_its_target_with_its_own_id() -> None:  # C40, C41
    item, target, kind, version, counts = item_of(evaluation(7))
    assert (item.evidence_id, target, kind, version, counts) == (
        "evaluation:ev-7",
        "agent-1",
        "agent",
        "v3",
        True,
    )
    assert (item.metric, item.value, item.baseline) == ("groundedness", 0.5 + 7 / 128, 0.8)
    drift = DriftDetected.model_validate(
        {
            "driftId": "d1",
            "targetAssetId": "agent-1",
            "metric": "latency",
            "baseline": 1.0,
            "observed": 2.5,
            "detectedAt": AT.isoformat(),
            "unknownField": 1,
        }
    )
    assert item_of(drift)[0].evidence_id == "drift:d1"
    skill = SkillCandidateProposed.model_validate(
        {
            "candidateId": "c1",
            "skillId": "skill-9",
            "reinforcements": 4,
            "proposedAt": AT.isoformat(),
        }
    )
    assert item_of(skill)[1:3] == ("skill-9", "skill")


def test_the_evidence_hash_is_of_the_sorted_ids_whatever_their_order() -> None:  # C43
    assert evidence_hash(["b", "a", "c"]) == evidence_hash(["c", "b", "a"])
    assert evidence_hash(["a", "b"]) != evidence_hash(["a", "b", "c"])
    assert evidence_hash(["a", "a", "b"]) == evidence_hash(["a", "b"])


def test_evidence_clusters_per_tenant_and_target_and_a_repeat_counts_once() -> None:  # C42
    facts = [fact(1), fact(2), fact(2), fact(3, target="agent-2"), fact(1, tenant="u")]
    found = clusters(facts, [])
    assert [(c.tenant_id, c.target_asset_id, len(c.items)) for c in found] == [
        ("t", "agent-1", 2),
        ("t", "agent-2", 1),
        ("u", "agent-1", 1),
    ]


def test_a_cluster_is_ready_only_with_min_evidence_items() -> None:  # C29, C47
    [cluster] = clusters([fact(1), fact(2)], [])
    assert not ready(cluster, 3)
    [cluster] = clusters([fact(1), fact(2), fact(3)], [])
    assert ready(cluster, 3)
    assert not ready(cluster, 4)
    assert ready(clusters([fact(1)], [])[0], 1)


def test_evidence_a_maintainer_took_up_is_spent_but_a_proposed_ones_stays() -> None:
    facts = [fact(1), fact(2), fact(3), fact(4)]
    refs = ("evaluation:ev-1", "evaluation:ev-2", "evaluation:ev-3")
    proposed = Known("p1", "t", "agent-1", "Proposed", refs)
    [cluster] = clusters(facts, [proposed])
    assert len(cluster.items) == 4  # a new hash: a new proposal supersedes p1 (C34)
    assert superseded_by_new(cluster, [proposed]) == ["p1"]
    for state in ("InReview", "Accepted", "Rejected"):
        [cluster] = clusters(facts, [Known("p1", "t", "agent-1", state, refs)])
        assert [i.evidence_id for i in cluster.items] == ["evaluation:ev-4"]
    assert clusters(facts, [Known("p1", "u", "agent-1", "Accepted", refs)])[0].items[0:1]


def test_the_kind_follows_the_evidence_table() -> None:  # C27
    failed, drift = EvidenceOrigin.failed_evaluation, EvidenceOrigin.drift
    assert kind_of("agent", [failed, drift]) == ProposalKind.prompt_improvement
    assert kind_of("agent", [drift, drift]) == ProposalKind.threshold_change
    assert kind_of("agent", [EvidenceOrigin.skill_candidate]) == ProposalKind.skill_improvement
    assert kind_of("skill", [failed]) == ProposalKind.skill_improvement
    assert kind_of("context-strategy", [failed]) == ProposalKind.context_strategy_improvement
    assert kind_of("profile", [drift]) == ProposalKind.profile_change
    assert kind_of("agent", [EvidenceOrigin.wrong_answer]) == ProposalKind.prompt_improvement


def cluster_of(*facts: Fact) -> Cluster:
    [cluster] = clusters(facts, [])
    return cluster


def test_the_expected_effect_is_computed_from_the_evidence() -> None:  # C30
    effect = expected_effect(
        cluster_of(
            fact(1, metric="g", value=0.5, baseline=0.8),
            fact(2, metric="g", value=0.7, baseline=0.8),
            fact(3, metric="h", value=1.0, baseline=2.0),
        )
    )
    assert (effect.metric, effect.from_, effect.to, effect.confidence) == ("g", 0.6, 0.8, 0.67)
    counted = expected_effect(cluster_of(fact(1), fact(2), fact(3)))
    assert (counted.metric, counted.from_, counted.to, counted.confidence) == (
        COUNT_METRIC,
        3.0,
        0.0,
        0.75,
    )
    assert json.loads(counted.model_dump_json(by_alias=True))["from"] == 3.0


async def test_the_structured_drafter_is_deterministic_with_summary_and_evidence_table() -> None:
    cluster = cluster_of(fact(1, metric="g", value=0.5, baseline=0.8), fact(2), fact(3))
    first, second = (
        await StructuredDrafter().draft(cluster),
        await StructuredDrafter().draft(cluster),
    )
    assert first == second
    assert first.summary.startswith("# Prompt improvement proposed for agent-1 (v3)")
    for n in (1, 2, 3):
        assert f"| evaluation:ev-{n} | failed-evaluation |" in first.summary
    assert "Expected effect: g from 0.5 to 0.8 (confidence 0.5)." in first.summary
    assert "changes nothing by itself" in first.summary  # C31


async def test_the_model_drafter_writes_prose_but_keeps_the_computed_numbers() -> None:
    seen: list[dict[str, Any]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        body = {"choices": [{"message": {"content": "Grounding fails on agent-1."}}]}
        return httpx.Response(200, json=body)

    drafter = ModelDrafter("http://model", "m-1", transport=httpx.MockTransport(answer))
    cluster = cluster_of(fact(1), fact(2), fact(3))
    draft = await drafter.draft(cluster)
    assert "Grounding fails on agent-1." in draft.summary
    assert "| evaluation:ev-1 |" in draft.summary
    assert draft.expected_effect == expected_effect(cluster)
    assert seen[0]["model"] == "m-1"


@pytest.mark.parametrize(
    "respond",
    [
        lambda r: httpx.Response(503),
        lambda r: httpx.Response(200, json={"choices": []}),
        lambda r: httpx.Response(200, text="not json"),
    ],
)
async def test_a_model_that_does_not_answer_a_completion_is_unavailable(respond: Any) -> None:
    drafter = ModelDrafter("http://model", "m", transport=httpx.MockTransport(respond))
    with pytest.raises(DrafterUnavailable):
        await drafter.draft(cluster_of(fact(1)))


async def test_the_model_profile_without_an_endpoint_is_unavailable() -> None:
    drafter = drafter_for(LearningSettings(proposal_profile="model"))
    with pytest.raises(DrafterUnavailable, match="MODEL_URL"):
        await drafter.draft(cluster_of(fact(1)))


def test_settings_are_read_from_the_environment_with_defaults_for_what_does_not_parse() -> None:
    assert LearningSettings.from_environ({}) == LearningSettings()  # C46, C47 defaults
    read = LearningSettings.from_environ(
        {
            "FEEDBACKLOOP_LEARNING_MIN_EVIDENCE_ITEMS": "5",
            "FEEDBACKLOOP_LEARNING_PROPOSAL_PROFILE": "Model",
            "FEEDBACKLOOP_LEARNING_MODEL_URL": "http://m",
        }
    )
    assert (read.min_evidence_items, read.proposal_profile, read.model_url) == (
        5,
        "model",
        "http://m",
    )
    bad = LearningSettings.from_environ(
        {
            "FEEDBACKLOOP_LEARNING_MIN_EVIDENCE_ITEMS": "0",
            "FEEDBACKLOOP_LEARNING_PROPOSAL_PROFILE": "poetry",
        }
    )
    assert (bad.min_evidence_items, bad.proposal_profile) == (3, "structured")
    assert len(bad.unparsed) == 2


def test_proposals_fall_due_daily_at_06_00_utc_and_a_downtime_is_caught_up() -> None:  # C42
    def names(previous: str | None, now: str) -> list[str]:
        orders = due(
            previous and datetime.fromisoformat(previous),
            datetime.fromisoformat(now),
            night_hour=None,
            proposal_hour=6,
        )
        return [o.name for o in orders if isinstance(o, RaiseProposals)]

    assert names("2026-11-30T05:00:00+00:00", "2026-11-30T05:59:59+00:00") == []
    assert names("2026-11-30T05:59:59+00:00", "2026-11-30T06:00:00+00:00") == [
        "proposals/2026-11-30"
    ]
    assert names("2026-11-30T06:00:00+00:00", "2026-11-30T07:00:00+00:00") == [
        "proposals/2026-11-30"  # again at every tick of the day: idempotent (C43)
    ]
    assert names("2026-11-27T12:00:00+00:00", "2026-11-30T07:00:00+00:00") == [
        "proposals/2026-11-28",
        "proposals/2026-11-29",
        "proposals/2026-11-30",
    ]
    assert parse_order("proposals/2026-11-30", AT) == RaiseProposals(date(2026, 11, 30), AT)
