"""The facts an appraisal is derived from: what was recorded, not what it means.

The read model keeps these (``projections/appraisal.py``); the meaning — signed outcomes,
valence, a label — is derived from them at read time (``outcomes.py``, ``labels.py``), so a
change to the contribution table reads differently over the whole history at once, without a
migration. Each fact cites the id it came from (SPEC M27).
"""

from dataclasses import dataclass, field
from datetime import datetime

from contracts.goals import GoalRef
from contracts.neighbours import RunCounters
from contracts.runtime_facts import (
    OwnerStop,
    OwnerVerdict,
    RunDraft,
    RunQuestion,
    RunRequest,
    RunStep,
)


@dataclass(frozen=True)
class FeedbackFact:
    """Feedback on a run (subject kind ``run``, subject ref = the run's id)."""

    feedback_id: str
    run_id: str
    kind: str  # rating, correction, comment, escalation
    rating: int | None
    at: datetime
    serves: tuple[GoalRef, ...] = ()


@dataclass(frozen=True)
class ReportFact:
    """A submitted wrong-answer report and how its review went."""

    report_id: str
    run_id: str | None  # the reported thread: the run the reply came from
    agent: str | None
    kind: str | None  # not-found, fabricated, retrieval, no-access, …
    # The report identifies the reply its reporter read (sidePanel.message, a Message line or
    # an answer excerpt): that reply reached somebody (SPEC M25, computed, never reported).
    reached_reporter: bool
    submitted_at: datetime
    status: str  # New, Triaged, Resolved, WontFix, HandedOver
    resolved_with_change: bool = False
    serves: tuple[GoalRef, ...] = ()


@dataclass(frozen=True)
class EvalRunFact:
    """A recorded eval run of one case: its verdict and whether a reply invented something."""

    run_id: str
    agent: str
    passed: bool
    invented: bool
    at: datetime


@dataclass(frozen=True)
class RunFact:
    """A neighbour's RunCompleted as appraisal reads it (SPEC M28, M47–M54)."""

    run_id: str
    agent: str
    completed_at: datetime
    development: bool = False
    counters: RunCounters | None = None  # None: an old record, nothing measured (M49)
    serves: tuple[GoalRef, ...] = ()
    succeeded: bool = True  # the run completed (an answered question counts only then)
    surface: str | None = None
    compacted: bool = False  # M43
    drafts: tuple[RunDraft, ...] = ()
    questions: tuple[RunQuestion, ...] = ()
    stops: tuple[OwnerStop, ...] = ()
    steps: tuple[RunStep, ...] = ()
    requests: tuple[RunRequest, ...] = ()


@dataclass(frozen=True)
class OwnerOutcomeFact:
    """The active owner outcome on a draft (SPEC M33: at most one); a withdrawn one is none."""

    outcome_id: str
    run_id: str
    draft_id: str
    verdict: OwnerVerdict


@dataclass(frozen=True)
class PassFact:
    """A paid pass's recorded numbers for a run (SPEC M44): an intervention opinion's word for
    the error it cites (read by no label, decisions D153), or the appraiser's one signed error
    (``sign`` 0: it found nothing further)."""

    run_id: str
    kind: str  # opinion (older: probe) | appraiser
    cite: str
    result: str  # opinion: mattered, redundant, inconclusive, skipped; appraiser: found, nothing
    sign: float = 0.0
    agency: str = "self"
    visible: bool = False


@dataclass(frozen=True)
class Facts:
    """What one read found, and which sources it could not read (SPEC M34: partial)."""

    feedback: tuple[FeedbackFact, ...] = ()
    reports: tuple[ReportFact, ...] = ()
    evals: tuple[EvalRunFact, ...] = ()
    runs: tuple[RunFact, ...] = ()
    owner_outcomes: tuple[OwnerOutcomeFact, ...] = ()
    passes: tuple[PassFact, ...] = ()
    read: tuple[str, ...] = ()
    unreadable: tuple[str, ...] = field(default=())
    damaged_runs: int = 0  # run rows that could not be read: missing evidence (M54)

    @property
    def partial(self) -> bool:
        return bool(self.unreadable)
