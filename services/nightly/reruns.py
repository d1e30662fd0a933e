"""Which confirmed cases a change of their agent owes a re-run, and how a night says so
(seed 000: cases are "replayed whenever the instructions or the model change"; decisions
D242).

Pure: the changes come in from the nights read model (``projections.agent_changes``), the
cases' last runs from the eval cases. A change is owed to a case of its agent that has run,
but not since the change was recorded here: the run after it, by a night or by hand, is the
re-run, and from then on the case orders as any other (W93). A case that never ran owes
nothing to a change: it comes first anyway, as never run.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

SHOWN = 3  # the newest owed changes a line names; the others are counted


@dataclass(frozen=True)
class Change:
    """A change of an agent, as the read model holds it."""

    agent: str
    what: str
    before: str | None
    after: str
    at: datetime  # when it took effect, as the registry said
    recorded_at: datetime  # when this service recorded it: what a case's last run is held to


def owed(
    agent: str | None, last_run_at: datetime | None, changes: Sequence[Change]
) -> list[Change]:
    """The changes of ``agent`` recorded after the case's last run, newest first (D242)."""
    if agent is None or last_run_at is None:
        return []
    found = [c for c in changes if c.agent == agent and c.recorded_at > last_run_at]
    return sorted(found, key=lambda c: c.recorded_at, reverse=True)


def told(change: Change) -> str:
    """``model changed claude-x → claude-y at 2026-12-04T10:00:00+00:00``."""
    moved = f"{change.before} → {change.after}" if change.before else f"to {change.after}"
    return f"{change.what} changed {moved} at {change.at.isoformat()}"


def rerun_reason(changes: Sequence[Change]) -> str | None:
    """What a line says of the changes a case is owed: ``re-run first: …``, the newest
    ``SHOWN`` of them and how many more; None when none is owed."""
    if not changes:
        return None
    said = "; ".join(told(change) for change in changes[:SHOWN])
    more = len(changes) - SHOWN
    return f"re-run first: {said}" + (f" (and {more} earlier)" if more > 0 else "")
