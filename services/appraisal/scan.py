"""The offline scan ``feedbackloop appraise`` prints: one free readout per run, counted.

Per run, never per resume: a run's drafts, stops and interventions are its own (the runtime
items are counted once by id, ``outcomes.of_runtime``). Development and test runs are left out
unless asked for (M54); a run row that could not be read is missing evidence, counted apart
(``sessions_unreadable``), never a smaller successful population. Which source could be read
is said per source (``*_read``), and ``valence.partial`` marks incomplete evidence (M34, M43).
The fields are the seed's.
"""

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from contracts.goals import GoalKind
from services.appraisal.charter import Charter
from services.appraisal.derivation import goal_errors
from services.appraisal.facts import Facts, RunFact
from services.appraisal.labels import Label, label, valence
from services.appraisal.outcomes import CONTRIBUTIONS, Contribution, GoalError
from services.appraisal.steps import read_steps

# The seed's sources, as this service keeps them (decisions D40).
SOURCES = {
    "outbox_read": "runs",
    "questions_read": "runs",
    "requests_read": "reports",
    "feedback_read": "feedback",
    "evals_read": "evals",
    "outcomes_read": "outcomes",
    "passes_read": "passes",
}
TEST_KIND = "test"


@dataclass(frozen=True)
class RunReadout:
    run: RunFact
    errors: tuple[GoalError, ...]
    label: Label


def chosen(facts: Facts, kind: str | None, include_tests: bool) -> tuple[list[RunFact], int]:
    """The runs a scan reads, and how many test runs it hid. ``--kind test`` implies tests."""
    tests = include_tests or kind == TEST_KIND
    runs = [r for r in facts.runs if kind in (None, TEST_KIND) or r.surface == kind]
    if kind == TEST_KIND:
        runs = [r for r in runs if r.development or r.surface == TEST_KIND]
    hidden = 0 if tests else sum(1 for r in runs if r.development)
    return ([r for r in runs if tests or not r.development], hidden)


def of_one(facts: Facts, run: RunFact) -> Facts:
    """The facts of one run: its feedback, reports, items, outcomes and passes."""
    mine = run.run_id
    return Facts(
        feedback=tuple(f for f in facts.feedback if f.run_id == mine),
        reports=tuple(r for r in facts.reports if r.run_id == mine),
        runs=(replace(run, development=False),),  # chosen already: read it as asked
        owner_outcomes=tuple(o for o in facts.owner_outcomes if o.run_id == mine),
        passes=tuple(p for p in facts.passes if p.run_id == mine),
    )


def readouts(
    facts: Facts, runs: list[RunFact], charter: Charter, now: datetime,
    table: Mapping[str, Contribution] = CONTRIBUTIONS,
) -> list[RunReadout]:  # fmt: skip
    out = []
    for run in runs:
        errors = tuple(goal_errors(of_one(facts, run), charter, now, table))
        out.append(RunReadout(run, errors, label(errors, charter, compacted=run.compacted)))
    return out


def on_line(error: GoalError, charter: Charter) -> bool:
    goal = error.goal
    return goal is not None and goal.kind is GoalKind.charter and charter.line(goal.id) is not None


def scan_json(
    facts: Facts, charter: Charter, now: datetime, *, kind: str | None, include_tests: bool,
    charter_readable: bool = True, passes: Mapping[str, dict[str, object]] | None = None,
) -> dict[str, object]:  # fmt: skip
    """The seed's ``sessions appraise --json``, over this service's runs."""
    runs, hidden = chosen(facts, kind, include_tests)
    read = readouts(facts, runs, charter, now)
    errors = [e for r in read for e in r.errors]
    sums = valence(errors)
    counters = [r.run.counters for r in read if r.run.counters is not None]
    steps = Counter(
        s.finding.value for r in read for s in read_steps(r.run.steps) if s.finding is not None
    )
    body: dict[str, object] = {
        "runs": len(read),
        "labels": dict(Counter(r.label.value for r in read)),
        "valence": {
            "positive": sums.positive,
            "negative": sums.negative,
            "shown": str(sums),
            "partial": bool(facts.unreadable) or not charter_readable
            or any(r.run.compacted for r in read),
        },
        "named_a_goal": sum(1 for r in read if r.run.serves),
        "attributed_by_sensor": sum(
            1 for r in read if not r.run.serves and any(on_line(e, charter) for e in r.errors)
        ),
        "cite_a_charter_line": sum(1 for r in read if any(on_line(e, charter) for e in r.errors)),
        "goal_put_to_owner": sum(1 for c in counters if c.goal_put_to_owner),
        "goal_confirmed": sum(1 for c in counters if c.goal_confirmed),
        "sessions_read": len(read),
        "sessions_unreadable": facts.damaged_runs,
        **{name: source not in facts.unreadable for name, source in SOURCES.items()},
        "charter_read": charter_readable,
        "tests_hidden": hidden,
        "step_findings": dict(steps),
    }  # fmt: skip
    for name, report in (passes or {}).items():  # omitted when that pass did not run
        body[name] = report
    return body
