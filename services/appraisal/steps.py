"""Step findings: a deterministic reading of each completed step's calls (SPEC M52, M53).

    a completed step whose span is …                        finding
    ambiguous: a call still in flight, or a denial in the   none (ambiguity is no finding)
      batch of its last call
    no calls at all                                         null-step
    last call failed, no later success                      ended-on-failure
    last call refused                                       ended-on-refusal
    anything else                                           none

Declared checks (M53): at most ``MAX_CHECKS`` run per run, in step order; a check is frozen
once its step completes (a later, different one is reported as a change, never taken); only
passed or failed says anything — refused, unavailable, skipped, not run or past the cap stay
unverified. None of these counters by itself declares a run unsuccessful.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from contracts.runtime_facts import CallStatus, CheckStatus, RunStep, StepCall

MAX_CHECKS = 16


class Finding(StrEnum):
    null_step = "null-step"
    ended_on_failure = "ended-on-failure"
    ended_on_refusal = "ended-on-refusal"


class Verification(StrEnum):
    passed = "passed"
    failed = "failed"
    unverified = "unverified"


@dataclass(frozen=True)
class StepReading:
    step_id: str
    finding: Finding | None
    check: Verification | None  # None: no check declared
    check_changes: int = 0  # checks written after completion: reported, not taken

    def as_json(self) -> dict[str, object]:
        return {
            "stepId": self.step_id,
            "finding": None if self.finding is None else self.finding.value,
            "check": None if self.check is None else self.check.value,
            "checkChanges": self.check_changes,
        }


def finding(calls: Sequence[StepCall]) -> Finding | None:
    """SPEC M52 for one completed step's span."""
    if not calls:
        return Finding.null_step
    last = calls[-1]
    if any(call.status is CallStatus.in_flight for call in calls):
        return None
    if any(c.status is CallStatus.denied and c.batch == last.batch for c in calls):
        return None
    if last.status is CallStatus.failed:
        return Finding.ended_on_failure
    if last.status is CallStatus.refused:
        return Finding.ended_on_refusal
    return None


def read_steps(steps: Sequence[RunStep]) -> list[StepReading]:
    """SPEC M52, M53: each completed step's finding and its check's verification."""
    readings: list[StepReading] = []
    checks_run = 0
    for step in steps:
        if not step.completed:
            continue
        check: Verification | None = None
        changes = 0
        if step.check is not None:
            frozen = step.check.command
            changes = sum(1 for later in step.check.rewritten if later != frozen)
            check = Verification.unverified
            if checks_run < MAX_CHECKS and step.check.status is not None:
                checks_run += 1
                if step.check.status is CheckStatus.passed:
                    check = Verification.passed
                elif step.check.status is CheckStatus.failed:
                    check = Verification.failed
        readings.append(StepReading(step.step_id, finding(step.calls), check, changes))
    return readings
