"""How the log's events read as evidence items of a cluster: pure, no I/O (SPEC C28; decisions
D55). The evidence clusters read model (``projections.evidence_clusters``) applies them."""

import json
from dataclasses import dataclass
from typing import Any

from contracts.report_kinds import parse_kind

LOW_RATING = 2
IMPROVEMENT, RE_EVALUATION, DATASET_ADDITION = "improvement", "re-evaluation", "dataset-addition"


def track_of(kind: str) -> str:
    """The track a proposal of ``kind`` was raised on."""
    return kind if kind in (RE_EVALUATION, DATASET_ADDITION) else IMPROVEMENT


def agent_asset(agent: str) -> str:
    """An agent path as an asset id: every ``/`` as ``_`` (as eval cases name it, W43)."""
    return agent.replace("/", "_")


@dataclass(frozen=True)
class Target:
    asset_id: str
    kind: str
    version: str | None
    dataset_id: str | None  # the agent's dataset, where the subject's asset is an agent


def says_wrong(e: Any) -> bool:
    """Feedback that is evidence: a correction, an escalation, a low rating."""
    low = e.kind == "rating" and e.rating is not None and e.rating <= LOW_RATING
    return low or e.kind in ("correction", "escalation")


# In place of a subject ref that holds its giver's id (decisions D137).
GIVERS_REF = "[a ref naming its giver]"


def subject_shown(e: Any) -> str:
    """The subject ref an evidence item's note shows: a ref that holds its giver's id is sealed
    under their key in the log (decisions D137), and the note is copied into a proposal's
    evidence, which no erasure reaches: it says what the ref was instead of copying it."""
    giver = getattr(e, "given_by", None)
    ref: str = e.subject_ref
    return GIVERS_REF if isinstance(giver, str) and giver and giver in ref else ref


def feedback_item(e: Any) -> dict[str, Any]:
    rating = f" {e.rating}" if e.rating is not None else ""
    corrected = (
        f"; corrected artifact {e.corrected_artifact_ref}" if e.corrected_artifact_ref else ""
    )
    return {
        "evidenceId": f"feedback:{e.originator_id}",
        "origin": "feedback",
        "note": f"{e.kind}{rating} on {e.subject_kind} {subject_shown(e)}{corrected}",
        "observedAt": e.timestamp.isoformat(),
        "serves": list(getattr(e, "serves", None) or []),  # feedback older than goals has none
    }


@dataclass(frozen=True)
class Said:
    """Feedback that says something is wrong, as the clusters take it: where its subject's
    asset is looked up (``subject_key``), its item as JSON text, and whether it adds a task
    (C27). Live, the clusters make it of the event as they apply it; a rebuild's worker
    processes make it ahead (``projections.evidence_staging``; decisions D70)."""

    tenant_id: str
    evidence_id: str
    subject_kind: str
    subject_ref: str
    item: str
    adds_task: bool


def said(e: Any) -> Said:
    """``e``, feedback that ``says_wrong``, as the clusters take it."""
    item = feedback_item(e)
    kind, ref = subject_key(e.subject_kind, e.subject_ref)
    adds_task = bool(e.corrected_artifact_ref) and e.subject_kind != "run"
    return Said(e.tenant_id, item["evidenceId"], kind, ref, json.dumps(item), adds_task)


def subject_key(subject_kind: str, subject_ref: str) -> tuple[str, str]:
    """Where a subject's asset is looked up: an attempt by its run (``<runId>#<n>``,
    decisions D55); every other subject by itself."""
    if subject_kind == "attempt":
        return "run", subject_ref.partition("#")[0]
    return subject_kind, subject_ref


def report_item(e: Any, kind: str | None) -> dict[str, Any]:
    """A submitted (or handed-over) wrong-answer report of ``kind``. A kind the parser does not
    know is the reporter's own words, kept as written (SPEC §3.4): the note, copied into a
    proposal's evidence, names only a known kind (decisions D137)."""
    known = parse_kind(kind)
    shown = known.value if known is not None else ("an unknown kind" if kind else "no kind")
    return {
        "evidenceId": f"report:{e.originator_id}",
        "origin": "wrong-answer",
        "note": f"wrong-answer report ({shown})",
        "observedAt": e.timestamp.isoformat(),
    }


def case_failed(e: Any) -> bool:
    """An eval case's run whose summary says it failed."""
    return isinstance(e.summary, dict) and e.summary.get("passed") is False


def case_item(e: Any, ref: str | None) -> dict[str, Any]:
    """A failed run of the eval case ``ref``; reasons of a shape no one foresaw are shown as
    they are (the item is read, not the reasons)."""
    reasons = ", ".join(str(r) for r in e.summary.get("reasons") or []) or "failed"
    looked = e.summary.get("looked_rate")
    return {
        "evidenceId": f"eval-run:{e.run_id}",
        "origin": "eval-case-failure",
        "metric": "looked_rate" if looked is not None else None,
        "value": looked,
        "note": f"eval case {ref or e.originator_id} failed: {reasons}",
        "observedAt": e.timestamp.isoformat(),
    }
