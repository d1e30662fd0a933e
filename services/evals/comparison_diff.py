"""The side-by-side of a comparison, case by case: a pure function of the two sides' results
(decisions D182). No clock, no I/O: the API, the console page and the CI gate all show this.

Per case: each side's verdict (``passed``, ``failed``, or ``not-run`` with why), the change
between them, each check's rate on each side and which changed, and each conversation's
pair with what differs in it (the reply's text, its tool calls, its score). A case
*regressed* when it passed on the baseline and did not pass on the candidate: a candidate
that gave no verdict where the current runner passed fails closed.
"""

from collections.abc import Mapping, Sequence
from typing import Any, Literal

Verdict = Literal["passed", "failed", "not-run"]
Change = Literal["regressed", "fixed", "unchanged", "not-compared"]
CHECKS = ("looked", "notInvented", "correct")


def verdict(result: Mapping[str, Any] | None) -> Verdict:
    summary = None if result is None else result.get("summary")
    if not summary:
        return "not-run"
    return "passed" if summary["passed"] else "failed"


def change(baseline: Verdict, candidate: Verdict) -> Change:
    if baseline == "passed" and candidate != "passed":
        return "regressed"
    if baseline == "failed" and candidate == "passed":
        return "fixed"
    if baseline == "not-run" or candidate == "not-run":
        return "not-compared"
    return "unchanged"


def rates(result: Mapping[str, Any] | None) -> dict[str, float | None]:
    """Each check's rate over the scored conversations (None: not applicable or not run)."""
    summary = None if result is None else result.get("summary")
    if not summary or not summary["scored"]:
        return dict.fromkeys(CHECKS)
    return {
        "looked": summary["looked_rate"],
        "notInvented": summary["not_invented"] / summary["scored"],
        "correct": summary["correct_rate"],
    }


def folded(text: str | None) -> str:
    return " ".join((text or "").split())


def calls(thread: Mapping[str, Any]) -> list[tuple[Any, Any]]:
    return [(c.get("name"), c.get("arguments")) for c in thread.get("toolCalls") or []]


def score_of(thread: Mapping[str, Any]) -> tuple[Any, ...]:
    score = thread.get("score") or {}
    return tuple(score.get(name) for name in ("looked", "invented", "correct", "non_answer"))


def conversation_pairs(
    baseline: Sequence[Mapping[str, Any]], candidate: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The n-th conversation of each side, side by side, and what differs between them."""
    pairs = []
    for index in range(max(len(baseline), len(candidate))):
        left = baseline[index] if index < len(baseline) else None
        right = candidate[index] if index < len(candidate) else None
        differs: list[str] = []
        if left is None or right is None:
            differs.append("missing")
        else:
            if folded(left.get("text")) != folded(right.get("text")):
                differs.append("text")
            if calls(left) != calls(right):
                differs.append("toolCalls")
            if score_of(left) != score_of(right):
                differs.append("score")
        pairs.append({"index": index + 1, "baseline": left, "candidate": right, "differs": differs})
    return pairs


def compare_case(
    case_id: str,
    ref: str | None,
    baseline: Mapping[str, Any] | None,
    candidate: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """One case's line of the side-by-side."""
    left, right = verdict(baseline), verdict(candidate)
    left_rates, right_rates = rates(baseline), rates(candidate)
    pairs = conversation_pairs(
        (baseline or {}).get("threads") or [], (candidate or {}).get("threads") or []
    )
    return {
        "caseId": case_id,
        "ref": ref,
        "baseline": {"verdict": left, "reason": (baseline or {}).get("reason")},
        "candidate": {"verdict": right, "reason": (candidate or {}).get("reason")},
        "change": change(left, right),
        "checks": {
            name: {"baseline": left_rates[name], "candidate": right_rates[name]} for name in CHECKS
        },
        "checksChanged": [name for name in CHECKS if left_rates[name] != right_rates[name]],
        "conversationsDiffering": sum(1 for pair in pairs if pair["differs"]),
        "conversations": pairs,
    }


def pass_rate(verdicts: Sequence[Verdict]) -> float | None:
    """Passed among the cases that ran on that side (None: none ran)."""
    ran = [v for v in verdicts if v != "not-run"]
    return sum(v == "passed" for v in ran) / len(ran) if ran else None


def side_by_side(
    case_ids: Sequence[str],
    refs: Mapping[str, str],
    results: Mapping[tuple[str, str], Mapping[str, Any]],
) -> dict[str, Any]:
    """Every case's line, in the comparison's order, and the totals of each side."""
    lines = [
        compare_case(
            case, refs.get(case), results.get((case, "baseline")), results.get((case, "candidate"))
        )
        for case in case_ids
    ]
    changes = [line["change"] for line in lines]
    return {
        "cases": lines,
        "baselinePassRate": pass_rate([line["baseline"]["verdict"] for line in lines]),
        "candidatePassRate": pass_rate([line["candidate"]["verdict"] for line in lines]),
        "regressed": changes.count("regressed"),
        "fixed": changes.count("fixed"),
        "unchanged": changes.count("unchanged"),
        "notCompared": changes.count("not-compared"),
    }
