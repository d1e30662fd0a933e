"""How the datasets read model composes a dataset's tasks from its rows: pure, no I/O (SPEC
C14, C15, C17, C25).

A task is composed when it is read, from what the read model holds about its run: the harvested
run, the corrections given on it and the validations that name it. So a correction that arrives
before its run and one that arrives after give the same task.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol


@dataclass(frozen=True)
class Run:
    task_id: str
    run_id: str
    agent_id: str
    agent_version: str | None
    input_ref: str
    output_ref: str | None  # the run's own output, when it succeeded
    scoring_rule: str
    completed_at: datetime


@dataclass(frozen=True)
class Correction:
    run_id: str
    feedback_id: str
    corrected_ref: str
    given_at: datetime


@dataclass(frozen=True)
class Check:
    """A validator's outcome on an artifact (and maybe a run)."""

    artifact_ref: str
    run_id: str | None
    validator: str
    outcome: str
    findings: int
    validated_at: datetime


@dataclass(frozen=True)
class Curated:
    task_id: str
    input_ref: str
    expected_ref: str
    scoring_rule: str
    curated_by: str


def expected_outcome(run: Run, corrections: Iterable[Correction]) -> tuple[str | None, str]:
    """A correction on the run supplies the expected outcome (the latest given wins, ties by
    feedback id); else a succeeded run's own output; else there is none."""
    mine = [c for c in corrections if c.run_id == run.run_id]
    if mine:
        latest = max(mine, key=lambda c: (c.given_at, c.feedback_id))
        return latest.corrected_ref, "correction"
    if run.output_ref is not None:
        return run.output_ref, "run-output"
    return None, "none"


def checks_of(checks: Iterable[Check], run_id: str | None, refs: set[str]) -> list[dict[str, Any]]:
    """SPEC C25: the validations that name the task's run, input or expected outcome."""
    found = [
        {
            "validator": c.validator,
            "outcome": c.outcome,
            "findings": c.findings,
            "artifactRef": c.artifact_ref,
            "validatedAt": c.validated_at.isoformat(),
        }
        for c in checks
        if (run_id is not None and c.run_id == run_id) or c.artifact_ref in refs
    ]
    return sorted(found, key=lambda v: (v["validatedAt"], v["validator"], v["artifactRef"]))


def compose(
    runs: Iterable[Run],
    corrections: Iterable[Correction],
    checks: Iterable[Check],
    curated: Iterable[Curated],
    removed: Iterable[str],
) -> list[dict[str, Any]]:
    """The dataset's tasks, sorted by ``taskId``: harvested runs that have an expected
    outcome, and curated tasks, less the removed ones. A curated task of the same id as a
    harvested one takes its place."""
    corrections, checks, gone = list(corrections), list(checks), set(removed)
    tasks: dict[str, dict[str, Any]] = {}
    for run in runs:
        expected, origin = expected_outcome(run, corrections)
        if expected is None:
            continue  # a candidate only: nothing could score an answer to it
        tasks[run.task_id] = {
            "taskId": run.task_id,
            "inputRef": run.input_ref,
            "expectedRef": expected,
            "expectedFrom": origin,
            "scoringRule": run.scoring_rule,
            "provenance": {
                "source": "harvested",
                "runId": run.run_id,
                "agentId": run.agent_id,
                "agentVersion": run.agent_version,
                "completedAt": run.completed_at.isoformat(),
            },
            "validations": checks_of(checks, run.run_id, {run.input_ref, expected}),
        }
    for task in curated:
        tasks[task.task_id] = {
            "taskId": task.task_id,
            "inputRef": task.input_ref,
            "expectedRef": task.expected_ref,
            "expectedFrom": "curated",
            "scoringRule": task.scoring_rule,
            "provenance": {"source": "curated", "curatedBy": task.curated_by},
            "validations": checks_of(checks, None, {task.input_ref, task.expected_ref}),
        }
    return [tasks[task_id] for task_id in sorted(tasks) if task_id not in gone]


class Row(Protocol):
    """A row of the read model's tables, read by column name."""

    def __getitem__(self, column: str, /) -> Any: ...


def compose_rows(
    runs: Iterable[Row],
    corrections: Iterable[Row],
    checks: Iterable[Row],
    curated: Iterable[Row],
    removed: Iterable[str],
) -> list[dict[str, Any]]:
    """``compose`` of the read model's rows, as its tables name their columns."""
    return compose(
        [
            Run(r["task_id"], r["run_id"], r["agent_id"], r["agent_version"], r["input_ref"],
                r["output_ref"], r["scoring_rule"], r["completed_at"])
            for r in runs
        ],
        [
            Correction(r["run_id"], str(r["feedback_id"]), r["corrected_ref"], r["given_at"])
            for r in corrections
        ],
        [
            Check(r["artifact_ref"], r["run_id"], r["validator"], r["outcome"], r["findings"],
                  r["validated_at"])
            for r in checks
        ],
        [
            Curated(r["task_id"], r["input_ref"], r["expected_ref"], r["scoring_rule"],
                    r["curated_by"])
            for r in curated
        ],
        removed,
    )  # fmt: skip
