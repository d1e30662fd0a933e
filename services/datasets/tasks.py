"""Snapshots as data: pure functions, no I/O (SPEC C17, C24).

A snapshot is the document of a dataset's tasks (composed by its read model,
``projections.dataset_tasks``) in one canonical encoding, and what it may hold when shared.
"""

import hashlib
import json
from typing import Any

from contracts.artifact_refs import SCHEME


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
