"""Tasks and snapshots as data: pure functions, no I/O (SPEC C14, C15, C17, C24, C25).

A task is composed when a snapshot is taken, from what the read model holds about its run:
the harvested run, the corrections given on it and the validations that name it. So a
correction that arrives before its run and one that arrives after give the same task.
"""

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from contracts.artifact_refs import SCHEME


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


def canonical(document: dict[str, Any]) -> bytes:
    """One spelling of a document: keys sorted, no whitespace, UTF-8. The same tasks always
    give the same bytes, hence the same content-addressed artifact."""
    return json.dumps(
        document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode()


def snapshot_document(dataset_id: str, target: str, tasks: list[dict[str, Any]]) -> bytes:
    return canonical({"datasetId": dataset_id, "target": target, "tasks": tasks})


def artifact_refs_of(content: bytes) -> set[str]:
    """Our artifacts a snapshot's tasks reference (inputs and expected outcomes)."""
    refs: set[str] = set()
    for task in json.loads(content)["tasks"]:
        refs.update(r for r in (task["inputRef"], task["expectedRef"]) if r.startswith(SCHEME))
    return refs


def anonymised(
    content: bytes, dataset_id: str, present: set[str] | None = None
) -> tuple[bytes, list[str], int]:
    """A snapshot as another tenant receives it (SPEC C17), with the artifacts to copy over.

    Anonymising, as we decide it: provenance (run ids, agent, who curated, when) goes; task
    ids are replaced by a hash of the task's input and expected outcome; a validation keeps
    its validator, outcome and findings only; the source's dataset id and target are not
    named. A task whose input or expected outcome is not an artifact of our store (another
    system's reference, which could name anything) is left out, as is one whose artifact is
    not ``present`` (when given). Our artifacts are named by their content, so the copies
    keep their references."""
    source = json.loads(content)
    tasks: list[dict[str, Any]] = []
    refs: set[str] = set()
    for task in source["tasks"]:
        pair = (task["inputRef"], task["expectedRef"])
        if not all(ref.startswith(SCHEME) for ref in pair):
            continue
        if present is not None and not all(ref in present for ref in pair):
            continue
        refs.update(pair)
        digest = hashlib.sha256("\n".join(pair).encode()).hexdigest()[:24]
        tasks.append(
            {
                "taskId": f"task-{digest}",
                "inputRef": pair[0],
                "expectedRef": pair[1],
                "scoringRule": task["scoringRule"],
                "validations": sorted(
                    (
                        {k: v[k] for k in ("validator", "outcome", "findings")}
                        for v in task["validations"]
                    ),
                    key=lambda v: (v["validator"], v["outcome"], v["findings"]),
                ),
            }
        )
    tasks.sort(key=lambda t: t["taskId"])
    unique = list({t["taskId"]: t for t in tasks}.values())
    document = canonical({"datasetId": dataset_id, "target": "shared", "tasks": unique})
    return document, sorted(refs), len(unique)
