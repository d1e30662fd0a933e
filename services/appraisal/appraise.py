"""One appraisal as the API shows it: facts in, label, valence and outcomes out — pure.

Called on every read (derived on read), with the contribution table as a
parameter, so the same facts under another table read differently with no migration.
"""

from collections.abc import Mapping
from datetime import datetime

from contracts.goals import GoalRef
from services.appraisal.charter import Charter
from services.appraisal.derivation import goal_errors
from services.appraisal.facts import Facts
from services.appraisal.labels import label, valence
from services.appraisal.outcomes import CONTRIBUTIONS, Contribution, GoalError


def outcome_json(error: GoalError) -> dict[str, object]:
    return {
        "goal": None if error.goal is None else str(error.goal),
        "channel": error.channel.value,
        "sign": error.sign,
        "agency": error.agency.value,
        "visible": error.visible,
        "controllable": error.controllable,
        "cite": error.cite,
        "outcome": error.outcome,
    }


def appraise(
    facts: Facts,
    charter: Charter,
    now: datetime,
    table: Mapping[str, Contribution] = CONTRIBUTIONS,
    *,
    charter_readable: bool = True,
    goal: GoalRef | None = None,
    compacted: bool = False,
) -> dict[str, object]:
    """SPEC M34, M41, M43: the label, the two sums, each outcome, and what could not be read;
    with ``goal``, only the outcomes counted against it (a charter line's appraisal). A
    compacted run reads neutral and its valence partial."""
    errors = goal_errors(facts, charter, now, table)
    if goal is not None:
        errors = [error for error in errors if error.goal == goal]
    sums = valence(errors)
    unreadable = list(facts.unreadable) + ([] if charter_readable else ["charter"])
    return {
        "label": label(errors, charter, compacted=compacted).value,
        "valence": {"positive": sums.positive, "negative": sums.negative, "shown": str(sums)},
        "outcomes": [outcome_json(error) for error in errors],
        "partial": bool(unreadable) or compacted,
        "sources": {
            "read": len(facts.read) + (1 if charter_readable else 0),
            "unreadable": len(unreadable),
            "unreadableNames": unreadable,
        },
        "counts": {
            "feedback": len(facts.feedback),
            "reports": len(facts.reports),
            "evalRuns": len(facts.evals),
            "runs": len(facts.runs),
        },
    }
