"""Step findings (SPEC M52) and declared checks (M53), one table each."""

import pytest

from contracts.runtime_facts import RunStep, StepCall
from services.appraisal.steps import MAX_CHECKS, Finding, Verification, finding, read_steps


def calls(*spec: str) -> list[StepCall]:
    """``"failed"`` or ``"denied@1"``: a status and its batch (0 unless given)."""
    out = []
    for item in spec:
        status, _, batch = item.partition("@")
        out.append(StepCall.model_validate({"status": status, "batch": int(batch or 0)}))
    return out


@pytest.mark.parametrize(
    ("span", "expected"),
    [
        ((), Finding.null_step),
        (("succeeded",), None),
        (("succeeded@0", "failed@1"), Finding.ended_on_failure),
        (("failed@0", "succeeded@1"), None),  # a later success
        (("succeeded@0", "refused@1"), Finding.ended_on_refusal),
        (("succeeded@0", "in_flight@1", "failed@2"), None),  # a call in flight: ambiguous
        (("denied@1", "failed@1"), None),  # a denial in the same batch: ambiguous
        (("denied@0", "failed@1"), Finding.ended_on_failure),  # an earlier batch's denial
    ],
)
def test_a_completed_step_s_span_gives_one_finding_or_none(
    span: tuple[str, ...], expected: Finding | None
) -> None:
    assert finding(calls(*span)) is expected


def step(step_id: str, status: str | None, *, completed: bool = True, **check: object) -> RunStep:
    data: dict[str, object] = {"stepId": step_id, "completed": completed,
                               "calls": [{"status": "succeeded"}]}  # fmt: skip
    if status != "none":
        data["check"] = {"command": "make test", "status": status, **check}
    return RunStep.model_validate(data)


@pytest.mark.parametrize(
    ("status", "expected"),
    [("passed", Verification.passed), ("failed", Verification.failed),
     ("refused", Verification.unverified), ("unavailable", Verification.unverified),
     ("skipped", Verification.unverified), (None, Verification.unverified), ("none", None)],
)  # fmt: skip
def test_only_passed_or_failed_verify_anything(
    status: str | None, expected: Verification | None
) -> None:  # M53
    (read,) = read_steps([step("s", status)])
    assert read.check is expected


def test_at_most_sixteen_checks_count_per_run_and_an_open_step_is_not_read() -> None:  # M53
    steps = [step(f"s{i}", "passed") for i in range(MAX_CHECKS + 2)]
    steps.append(step("open", "passed", completed=False))
    read = read_steps(steps)
    assert [r.check for r in read].count(Verification.passed) == MAX_CHECKS
    assert [r.check for r in read[MAX_CHECKS:]] == [Verification.unverified] * 2
    assert "open" not in [r.step_id for r in read]


def test_a_check_is_frozen_once_its_step_completes() -> None:  # M53
    (read,) = read_steps([step("s", "passed", rewritten=["make test", "true", "echo ok"])])
    assert (read.check, read.check_changes) == (Verification.passed, 2)  # reported, not taken
