"""Scoring an eval run: three deterministic checks on each thread, then the pass rule.

SPEC W55: no model is the judge. Check 1 *looked* (W59), check 2 *did not invent* (W60–W63),
check 3 *correct* (W64), normalised as §3.6 says; the run passes by the §3.7 rule (W65–W67).
A non-answer (W70, W71) is not an invention and is left out of every rate. Pure: no I/O.

Decisions of ours where SPEC leaves room (pinned in tests/unit/test_scoring.py):
- a blank mustNotAssert value is never found, and a blank mustAssert is n/a;
- a node is named only as a whole path: a child or a longer sibling name does not count;
- with no mustGround there is nothing to look for, so check 1 passes.
How a reply states a value (numbers by digits, text folded) is ``services.evals.normalisation``.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from services.evals.normalisation import contains_value, fold

LOOKUP_TOOLS = frozenset({"Get", "Search"})


class CallLike(Protocol):
    """A tool call as a reply records it; ``contracts.reports.ToolCallRecord`` is one."""

    @property
    def name(self) -> str: ...
    @property
    def arguments(self) -> str: ...
    @property
    def result(self) -> str: ...


# ---- The three checks ------------------------------------------------------------------------


def _names_node(text: str, node: str) -> bool:
    """Does the text name the node as a whole path (not a child, not a longer name)?"""
    path = re.escape(fold(node).strip("@/ "))
    return bool(path) and re.search(rf"(?<![\w.\-]){path}(?![\w\-/])", fold(text)) is not None


def looked(calls: Sequence[CallLike], must_ground: Sequence[str]) -> bool:
    """Check 1 (W59): some Get or Search call names a mustGround node in its arguments or its
    result; no other tool counts. With no mustGround node there is nothing to look for: passed."""
    nodes = [node for node in must_ground if node.strip()]
    if not nodes:
        return True
    return any(
        _names_node(text, node)
        for call in calls
        if call.name in LOOKUP_TOOLS
        for text in (call.arguments, call.result)
        for node in nodes
    )


def invented(reply: str, must_not_assert: Sequence[str]) -> bool:
    """Check 2, negated (W60): does the reply state any mustNotAssert value?"""
    return any(contains_value(reply, value) for value in must_not_assert)


def correct(reply: str, must_assert: str | None) -> bool | None:
    """Check 3 (W64): does the reply state mustAssert (numbers by digits)? None = n/a: no value."""
    if must_assert is None or not must_assert.strip():
        return None
    return contains_value(reply, must_assert)


@dataclass(frozen=True)
class ThreadScore:
    """One thread's score; a non-answer carries its reason and is not scored (W70, W71)."""

    looked: bool
    invented: bool
    correct: bool | None
    non_answer: bool = False
    reason: str | None = None


def score_reply(
    reply_text: str,
    calls: Sequence[CallLike],
    *,
    must_ground: Sequence[str],
    must_not_assert: Sequence[str],
    must_assert: str | None,
    non_answer_reason: str | None = None,
) -> ThreadScore:
    """Score one reply. The caller decides whether it is a non-answer (the model-configuration
    error, W70, or an answer on another model than the pinned one, W71) and says why; such a
    reply is never an invention and none of its checks is run."""
    if non_answer_reason is not None:
        return ThreadScore(
            looked=False, invented=False, correct=None, non_answer=True, reason=non_answer_reason
        )
    return ThreadScore(
        looked=looked(calls, must_ground),
        invented=invented(reply_text, must_not_assert),
        correct=correct(reply_text, must_assert),
    )


# ---- The pass rule (§3.7) --------------------------------------------------------------------


@dataclass(frozen=True)
class Thresholds:
    """The rates a run must reach (W66): check 1 → 0.8, check 3 → 0.6 until set per agent."""

    looked: float = 0.8
    correct: float = 0.6

    def __post_init__(self) -> None:
        if not (0.0 <= self.looked <= 1.0 and 0.0 <= self.correct <= 1.0):
            raise ValueError(f"thresholds are rates between 0 and 1: {self}")


@dataclass(frozen=True)
class RunSummary:
    """A run's counts and rates; ``reasons`` says in words why it did not pass."""

    runs: int
    scored: int
    non_answers: int
    looked: int
    not_invented: int
    correct: int  # among the scored threads that have a mustAssert
    looked_rate: float | None  # None: n/a, nothing scored
    correct_rate: float | None  # None: n/a, no mustAssert or nothing scored
    passed: bool
    reasons: tuple[str, ...]


def summarize(scores: Sequence[ThreadScore], thresholds: Thresholds = Thresholds()) -> RunSummary:
    """The §3.7 pass rule (proposed): something was scored (W67), no thread invented (N/N, W65),
    looked_rate ≥ its threshold and, where mustAssert is set, correct_rate ≥ its threshold (W66).
    Non-answers are counted apart and left out of every rate (§3.7)."""
    scored = [score for score in scores if not score.non_answer]
    asserted = [score for score in scored if score.correct is not None]
    looked_count = sum(score.looked for score in scored)
    not_invented = sum(not score.invented for score in scored)
    correct_count = sum(score.correct is True for score in asserted)
    looked_rate = looked_count / len(scored) if scored else None
    correct_rate = correct_count / len(asserted) if asserted else None

    reasons: list[str] = []
    if not scored:
        reasons.append("no-scored-runs")  # SPEC W67: zero runs, or all non-answers
    if not_invented < len(scored):
        reasons.append("invented")  # SPEC W65: not-invented must be unanimous
    if looked_rate is not None and looked_rate < thresholds.looked:
        reasons.append("looked-below-threshold")
    if correct_rate is not None and correct_rate < thresholds.correct:
        reasons.append("correct-below-threshold")
    return RunSummary(
        runs=len(scores),
        scored=len(scored),
        non_answers=len(scores) - len(scored),
        looked=looked_count,
        not_invented=not_invented,
        correct=correct_count,
        looked_rate=looked_rate,
        correct_rate=correct_rate,
        passed=not reasons,
        reasons=tuple(reasons),
    )
