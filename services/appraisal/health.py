"""Health counters per agent from RunCompleted (SPEC M47–M51, M54).

Every rate is a per-run share — runs with at least one event over the runs that could have one
— never a ratio of event totals (M51). Each comes with its numerator, its denominator and the
runs that could not say (their counter was not measured): those are unknown, not clean (M49).
Development and test runs are left out before anything is counted (M54).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from contracts.neighbours import RunCounters
from services.appraisal.facts import RunFact


@dataclass(frozen=True)
class Share:
    runs: int  # numerator: eligible runs that had it
    eligible: int  # denominator
    unknown: int  # runs whose counters were not measured

    @property
    def rate(self) -> float | None:
        return self.runs / self.eligible if self.eligible else None  # none eligible: no rate

    def as_json(self) -> dict[str, float | int | None]:
        return {
            "rate": self.rate,
            "runs": self.runs,
            "eligible": self.eligible,
            "unknown": self.unknown,
        }


@dataclass(frozen=True)
class Health:
    runs: int  # appraised runs (development left out)
    development: int
    goal_drift: Share
    named_nothing: int  # anchored runs whose plan writes never named a goal (M49)
    step_nulls: Share
    step_reopens: Share

    def as_json(self) -> dict[str, object]:
        return {
            "runs": self.runs,
            "developmentExcluded": self.development,
            "goalDrift": self.goal_drift.as_json(),
            "namedNothing": self.named_nothing,
            "stepNulls": self.step_nulls.as_json(),
            "stepReopens": self.step_reopens.as_json(),
        }


Test = Callable[[RunCounters], bool | None]  # None: this run cannot say


def share(runs: Sequence[RunFact], eligible: Test, had: Test) -> Share:
    yes = total = unknown = 0
    for run in runs:
        counters = run.counters
        verdict = None if counters is None else eligible(counters)
        if verdict is None:
            unknown += 1
        elif verdict:
            total += 1
            yes += bool(had(counters))  # type: ignore[arg-type]
    return Share(yes, total, unknown)


def named_a_goal(c: RunCounters) -> bool | None:
    """M48: eligible = anchored, with at least one plan write that named a goal."""
    if c.goal_anchor is None or c.goal_plan_writes is None:
        return None
    return c.goal_anchor and c.goal_plan_writes - (c.goal_unnamed_writes or 0) > 0


def health(runs: Sequence[RunFact]) -> Health:
    appraised = [run for run in runs if not run.development]
    anchored_unnamed = sum(
        1
        for run in appraised
        if run.counters is not None
        and run.counters.goal_anchor
        and named_a_goal(run.counters) is False
    )
    return Health(
        runs=len(appraised),
        development=len(runs) - len(appraised),
        goal_drift=share(
            appraised, named_a_goal, lambda c: bool(c.goal_drift_writes)
        ),  # M48: ≥1 changed pointer
        named_nothing=anchored_unnamed,
        step_nulls=share(  # M51: ÷ runs with a measured completion
            appraised,
            lambda c: None if c.step_measured is None else c.step_measured > 0,
            lambda c: bool(c.step_nulls),
        ),
        step_reopens=share(  # M51: ÷ runs that completed or reopened a step
            appraised,
            lambda c: (
                None
                if c.step_completions is None or c.step_reopens is None
                else c.step_completions > 0 or c.step_reopens > 0
            ),
            lambda c: bool(c.step_reopens),
        ),
    )
