"""What the HTTP API answers about a comparison (decisions D180–D182): each side's runner,
and case by case each side's verdict, the change, each check's rate and each conversation
side by side with what differs."""

from typing import Literal

from pydantic import Field
from pydantic.config import JsonDict

from contracts import eval_examples
from contracts import example_story as story
from contracts.answers import Answer, Timestamp, shown_as
from contracts.eval_answers import ThreadView

COMPARISON_ID = "5f0e8a52-3c1d-4b7e-9a60-2d4c8e1f7b39"
CANDIDATE = "claude-haiku-4-5"
_REGRESSED = {
    **eval_examples.THREAD_2,
    "index": 1,
    "link": f"/factory/evals/comparisons/{COMPARISON_ID}",
    "modelName": CANDIDATE,
    "text": "You charge CHF 120 per hour.",
    "toolCalls": [],
    "score": {**eval_examples.THREAD_2["score"], "looked": False, "correct": False},  # type: ignore[dict-item]
}
COMPARISON: JsonDict = {
    "comparisonId": COMPARISON_ID,
    "agent": story.AGENT,
    "baseline": None,
    "candidate": CANDIDATE,
    "conversations": 1,
    "effort": "medium",
    "startedBy": story.REPORTER,
    "openedAt": "2026-11-27T10:05:30.000000+00:00",
    "finished": True,
    "baselinePassRate": 1.0,
    "candidatePassRate": 0.0,
    "regressed": 1,
    "fixed": 0,
    "unchanged": 0,
    "notCompared": 0,
    "cases": [
        {
            "caseId": story.CASE_ID,
            "ref": story.CASE_REF,
            "baseline": {"verdict": "passed", "reason": None},
            "candidate": {"verdict": "failed", "reason": None},
            "change": "regressed",
            "checks": {
                "looked": {"baseline": 1.0, "candidate": 0.0},
                "notInvented": {"baseline": 1.0, "candidate": 1.0},
                "correct": {"baseline": 1.0, "candidate": 0.0},
            },
            "checksChanged": ["looked", "correct"],
            "conversationsDiffering": 1,
            "conversations": [
                {
                    "index": 1,
                    "baseline": eval_examples.THREAD_1,
                    "candidate": _REGRESSED,
                    "differs": ["text", "toolCalls", "score"],
                }
            ],
        }
    ],
}

Verdict = Literal["passed", "failed", "not-run"]


class SideVerdict(Answer):
    verdict: Verdict
    reason: str | None = Field(description="Why it did not run (not-run), else null.")


class CheckRates(Answer):
    baseline: float | None
    candidate: float | None


class ConversationPair(Answer):
    index: int
    baseline: ThreadView | None
    candidate: ThreadView | None
    differs: list[Literal["missing", "text", "toolCalls", "score"]]


class ComparedCase(Answer):
    case_id: str = Field(alias="caseId", json_schema_extra={"format": "uuid"})
    ref: str | None
    baseline: SideVerdict
    candidate: SideVerdict
    change: Literal["regressed", "fixed", "unchanged", "not-compared"] = Field(
        description="regressed: passed on the baseline, not on the candidate (D182)."
    )
    checks: dict[Literal["looked", "notInvented", "correct"], CheckRates]
    checks_changed: list[str] = Field(alias="checksChanged")
    conversations_differing: int = Field(alias="conversationsDiffering")
    conversations: list[ConversationPair]


class ComparisonView(Answer):
    model_config = shown_as(COMPARISON)

    comparison_id: str = Field(alias="comparisonId", json_schema_extra={"format": "uuid"})
    agent: str
    baseline: str | None = Field(description="The baseline's model; null: each case's own.")
    candidate: str
    conversations: int
    effort: Literal["low", "medium", "high"]
    started_by: str = Field(alias="startedBy")
    opened_at: Timestamp = Field(alias="openedAt")
    finished: bool
    baseline_pass_rate: float | None = Field(alias="baselinePassRate")
    candidate_pass_rate: float | None = Field(alias="candidatePassRate")
    regressed: int
    fixed: int
    unchanged: int
    not_compared: int = Field(alias="notCompared")
    cases: list[ComparedCase]
