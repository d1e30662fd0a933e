"""Planning a night: which confirmed cases run, in which order, and why the others do not.

Pure and deterministic (SPEC W93–W96): the same cases, settings and catalogue always plan the
same night. Only confirmed cases are candidates (W78). Never-run cases come first, then the
oldest lastRun, ties by ref (W93). A case that cannot run takes no slot (W95) and gets a line
saying why; the first ``max_cases`` runnable ones are selected, the rest are over-cap lines
and the note says the cap was reached (W96). Reasons are SPEC §3.8's vocabulary.

Ahead of that order come the cases a change of their agent owes a re-run (decisions D242,
``services.nightly.reruns``), in W93's order among themselves, within the same cap: each of
their entries and lines says ``re-run first: model changed a → b at …`` (``rerun``), and the
note counts them, over the cap too, so that a change bigger than a night is said.

Whether each confirmer still holds the right on the case's agent (W99, W100) is asked at
planning too — the runner asks the rule engine (``services.nightly.confirmer``) and hands the
answers in — so a case whose confirmer has lost it takes no slot and the next runnable case
gets it; the runner asks again just before the case runs, for a maintainer removed from the
register during the night.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from services.nightly.catalogue import EU, Catalogue
from services.nightly.reruns import Change, owed, rerun_reason
from services.nightly.settings import NightlySettings

NO_CONFIRMER = "no-confirmer"
NO_MODEL = "no-model"
NOT_EU = "model-not-eu-routed"
RESIDENCY_UNREADABLE = "model-residency-unreadable"
CONFIRMER_LACKS_UPDATE = "confirmer-lacks-update"
PERMISSION_CHECK_UNAVAILABLE = "permission-check-unavailable"
NO_LANGUAGE_MODEL = "no-language-model"
OVER_CAP = "over-cap"


@dataclass(frozen=True)
class Candidate:
    """A confirmed case as the eval-cases read model shows it."""

    case_id: UUID
    ref: str
    confirmed_by: str | None
    model: str | None  # pinned on the case
    last_run_at: datetime | None
    agent: str | None = None  # whose maintainers may update it (W99)


@dataclass(frozen=True)
class Selected:
    case_id: UUID
    ref: str
    confirmer: str
    model: str
    effort: str
    rerun: str | None = None  # why it runs first: a change of its agent (D242)

    def as_json(self) -> dict[str, Any]:
        return {
            "case": str(self.case_id),
            "ref": self.ref,
            "confirmer": self.confirmer,
            "model": self.model,
            "effort": self.effort,
            "rerun": self.rerun,
        }


@dataclass(frozen=True)
class Plan:
    selected: list[Selected]
    lines: list[dict[str, Any]]  # every confirmed case that does not run (W88)
    note: str


def order(
    candidates: list[Candidate], reruns: Mapping[UUID, str | None] | None = None
) -> list[Candidate]:
    """D242: the cases a change owes a re-run (``reruns``, by case) first; then, and among
    them, W93: never-run first, then the oldest lastRun, ties by ref (and id, for equal
    refs)."""
    owing = reruns or {}
    return sorted(
        candidates,
        key=lambda c: (
            owing.get(c.case_id) is None,
            c.last_run_at is not None,
            c.last_run_at or datetime.min,
            c.ref,
            c.case_id,
        ),
    )


def reruns_of(candidates: list[Candidate], changes: Sequence[Change]) -> dict[UUID, str | None]:
    """What each case's line says of the changes of its agent it is owed (None: none)."""
    return {c.case_id: rerun_reason(owed(c.agent, c.last_run_at, changes)) for c in candidates}


def why_not(
    candidate: Candidate,
    model: str | None,
    catalogue: Catalogue,
    agent_configured: bool,
    rights: Mapping[tuple[str, str | None], str | None] | None = None,
) -> str | None:
    """Why a case cannot run tonight, or None when it can. ``rights``: why each confirmer
    may not update the cases of an agent now, by (confirmer, agent) (None: they may), as the
    rule engine answered."""
    if not candidate.confirmed_by:
        return NO_CONFIRMER  # W76: the stamped person only
    lost = (rights or {}).get((candidate.confirmed_by, candidate.agent))
    if lost is not None:
        return lost  # W95, W99, W100: a case its confirmer may not run takes no slot
    if not agent_configured:
        return NO_LANGUAGE_MODEL  # W69: nothing to talk to
    if model is None:
        return NO_MODEL  # W84
    mark = catalogue.residency(model)
    if mark is None:
        return RESIDENCY_UNREADABLE  # W98
    if mark != EU:
        return NOT_EU  # W97
    return None


def skipped(
    case_id: UUID,
    reason: str,
    at: datetime,
    model: str | None = None,
    rerun: str | None = None,
) -> dict[str, Any]:
    outcome = OVER_CAP if reason == OVER_CAP else "skipped"
    line: dict[str, Any] = {"case": str(case_id), "outcome": outcome, "reason": reason}
    if model is not None:
        line["model"] = model
    if rerun is not None:
        line["rerun"] = rerun  # D242: a change owed it a re-run, which it did not get tonight
    return {**line, "at": at.isoformat()}


def plan_night(
    candidates: list[Candidate],
    settings: NightlySettings,
    catalogue: Catalogue,
    *,
    agent_configured: bool,
    now: datetime,
    rights: Mapping[tuple[str, str | None], str | None] | None = None,
    changes: Sequence[Change] = (),
) -> Plan:
    selected: list[Selected] = []
    lines: list[dict[str, Any]] = []
    over_cap = 0
    reruns = reruns_of(candidates, changes)
    for candidate in order(candidates, reruns):
        model = candidate.model or settings.model  # W97: pinned, else the declared Model
        reason = why_not(candidate, model, catalogue, agent_configured, rights)
        rerun = reruns[candidate.case_id]
        if reason is not None:
            lines.append(skipped(candidate.case_id, reason, now, model, rerun))
        elif len(selected) >= settings.max_cases:
            over_cap += 1
            lines.append(skipped(candidate.case_id, OVER_CAP, now, model, rerun))
        else:
            assert candidate.confirmed_by  # why_not said so
            assert model
            selected.append(
                Selected(
                    candidate.case_id, candidate.ref, candidate.confirmed_by, model,
                    settings.effort, rerun,
                )
            )  # fmt: skip
    changed = changed_note(candidates, reruns, selected, lines)
    return Plan(selected, lines, note(settings, over_cap, catalogue, changed))


def changed_note(
    candidates: list[Candidate],
    reruns: Mapping[UUID, str | None],
    selected: list[Selected],
    lines: list[dict[str, Any]],
) -> str | None:
    """D242: how many of the cases a change owes a re-run run tonight, how many the cap left
    for the next night (they stay owed, and first), how many cannot run; and whose."""
    agents = sorted({c.agent or "" for c in candidates if reruns.get(c.case_id)})
    if not agents:
        return None
    ran = sum(1 for s in selected if s.rerun)
    over = sum(1 for line in lines if line.get("rerun") and line["outcome"] == OVER_CAP)
    cannot = sum(1 for line in lines if line.get("rerun") and line["outcome"] != OVER_CAP)
    parts = [f"{ran} selected"]
    if over:
        parts.append(f"{over} over-cap, first again at the next night")
    if cannot:
        parts.append(f"{cannot} cannot run")
    return f"re-run first after a change of {', '.join(agents)}: " + ", ".join(parts)


def note(
    settings: NightlySettings, over_cap: int, catalogue: Catalogue, changed: str | None = None
) -> str:
    """W86, W96: the cap when it was reached, the settings that fell back to their default;
    D242: the cases re-run first after a change of their agent."""
    parts = []
    if changed is not None:
        parts.append(changed)
    if over_cap:
        parts.append(
            f"cap reached: {settings.max_cases} cases ran at most, {over_cap} left over-cap"
        )
    if settings.unparsed:
        parts.append("did not parse, default used: " + ", ".join(settings.unparsed))
    if catalogue.problem is not None:
        parts.append(catalogue.problem)
    return "; ".join(parts)
