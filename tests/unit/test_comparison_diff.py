"""The side-by-side of a comparison (decisions D182): verdicts, changes, checks and
conversations, case by case; and the Comparison aggregate's rules (D181)."""

from datetime import UTC, datetime
from typing import Any
from uuid import UUID, uuid4

import pytest

from contracts.errors import Refused
from services.evals.comparison import Comparison
from services.evals.comparison_diff import compare_case, conversation_pairs, side_by_side

AT = datetime(2026, 12, 5, 14, 0, tzinfo=UTC)


def thread(text: str, looked: bool = True, correct: bool | None = True) -> dict[str, Any]:
    score = {"looked": looked, "invented": False, "correct": correct, "non_answer": False}
    calls = [{"name": "Get", "arguments": "acme/Profile"}] if looked else []
    return {"text": text, "toolCalls": calls, "score": {**score, "reason": None}}


def run(passed: bool, *threads: dict[str, Any]) -> dict[str, Any]:
    scored = len(threads)
    looked = sum(t["score"]["looked"] for t in threads)
    correct = sum(t["score"]["correct"] is True for t in threads)
    summary = {
        "passed": passed, "scored": scored, "not_invented": scored,
        "looked_rate": looked / scored, "correct_rate": correct / scored,
    }  # fmt: skip
    return {"summary": summary, "threads": list(threads), "reason": None}


GOOD = thread("CHF 150 per hour, says your profile.")
BAD = thread("CHF 120.", looked=False, correct=False)


def test_a_case_that_passed_on_the_baseline_and_fails_on_the_candidate_regressed() -> None:
    line = compare_case("c", "_Evals/A/c", run(True, GOOD, GOOD), run(False, GOOD, BAD))
    assert (line["baseline"]["verdict"], line["candidate"]["verdict"]) == ("passed", "failed")
    assert line["change"] == "regressed"
    assert line["checksChanged"] == ["looked", "correct"]
    assert line["checks"]["looked"] == {"baseline": 1.0, "candidate": 0.5}
    assert line["conversationsDiffering"] == 1
    first, second = line["conversations"]
    assert first["differs"] == []
    assert second["differs"] == ["text", "toolCalls", "score"]


def test_a_candidate_that_did_not_run_where_the_baseline_passed_fails_closed() -> None:
    missing: dict[str, Any] = {
        "summary": None,
        "threads": [],
        "reason": "failed: AgentUnavailable: down",
    }
    line = compare_case("c", None, run(True, GOOD), missing)
    assert line["candidate"] == {"verdict": "not-run", "reason": missing["reason"]}
    assert line["change"] == "regressed"
    assert line["conversations"][0]["differs"] == ["missing"]


@pytest.mark.parametrize(
    ("baseline", "candidate", "expected"),
    [
        (True, True, "unchanged"),
        (False, False, "unchanged"),
        (False, True, "fixed"),
        (None, True, "not-compared"),
        (None, False, "not-compared"),
        (False, None, "not-compared"),
    ],
)
def test_the_change_between_two_verdicts(
    baseline: bool | None, candidate: bool | None, expected: str
) -> None:
    def side(passed: bool | None) -> dict[str, Any] | None:
        return None if passed is None else run(passed, GOOD)

    assert compare_case("c", None, side(baseline), side(candidate))["change"] == expected


def test_text_differing_only_in_whitespace_is_the_same_conversation() -> None:
    (pair,) = conversation_pairs([thread("CHF  150\n")], [thread("CHF 150")])
    assert pair["differs"] == []


def test_each_side_s_pass_rate_counts_the_cases_that_ran_on_it() -> None:
    results = {
        ("a", "baseline"): run(True, GOOD), ("a", "candidate"): run(False, BAD),
        ("b", "baseline"): run(True, GOOD), ("b", "candidate"): run(True, GOOD),
        ("c", "baseline"): run(False, BAD),
        ("c", "candidate"): {"summary": None, "threads": [], "reason": "no-confirmer"},
    }  # fmt: skip
    shown = side_by_side(["a", "b", "c"], {"a": "_Evals/A/a"}, results)
    assert [line["caseId"] for line in shown["cases"]] == ["a", "b", "c"]
    assert shown["cases"][0]["ref"] == "_Evals/A/a"
    assert shown["baselinePassRate"] == pytest.approx(2 / 3)
    assert shown["candidatePassRate"] == 0.5
    assert (shown["regressed"], shown["unchanged"], shown["notCompared"]) == (1, 1, 1)


def opened(*cases: str) -> Comparison:
    return Comparison.open(
        comparison_id=uuid4(), tenant_id="acme", agent="A/B", baseline=None, candidate="m2",
        conversations=1, effort="medium", case_ids=[uuid4() for _ in cases], started_by="alice",
        at=AT,
    )  # fmt: skip


def test_a_comparison_without_cases_is_refused_naming_the_agent() -> None:
    with pytest.raises(Refused) as refused:
        opened()
    assert refused.value.field == "agent"


def test_a_case_is_recorded_once_per_side_and_only_if_it_is_in_the_comparison() -> None:
    comparison = opened("x")
    case = UUID(comparison.case_ids[0])
    for _ in range(2):  # a retry after a lost answer records nothing more
        comparison.record(case_id=case, side="baseline", ran_by="alice", model=None,
                          threads=[], summary=None, reason="no-reply", at=AT)  # fmt: skip
    assert len(comparison.collect_events()) == 2  # opened, one record
    assert not comparison.finished
    with pytest.raises(Refused) as refused:
        comparison.record(case_id=uuid4(), side="candidate", ran_by="alice", model=None,
                          threads=[], summary=None, reason=None, at=AT)  # fmt: skip
    assert refused.value.field == "caseId"
