"""Closing a task appraises it, once per transition (SPEC M45, M46).

A TaskClosed fact is noted on arrival (one aggregate per transition: a redelivery, or the same
transition sent again, notes nothing new). Its appraisal is the free readout of the runs that
served the task, decided once: a second appraisal of the same transition changes nothing.

A follow-up task is staged only when the owner accepted the work (``done``, never ``dropped``:
a dropped closure is the owner declining it) and the reading names residue — a label in
``RESIDUE`` or a run cut short (a stop or a silent failure). distress alone stages nothing: it
is a verdict the owner already delivered. The follow-up cites the original task by its id,
never its name (M46), and is published on a topic of its own for the task system to take
(``published.py``).
"""

from datetime import datetime
from uuid import UUID, uuid5

from eventsourcing.domain import Aggregate, event

from contracts.runtime_facts import TaskStatus
from services.appraisal.labels import Label

CLOSURE_NAMESPACE = UUID("c4d2a9e1-3b7f-5a10-9e62-81f0b5d4a3c7")
# Labels that name residue worth one task on a board (decisions D39).
RESIDUE = frozenset({Label.disappointment, Label.regret, Label.frustration, Label.embarrassment})


def closure_id(tenant_id: str, transition_id: str) -> UUID:
    return uuid5(CLOSURE_NAMESPACE, f"{tenant_id}/transition/{transition_id}")


def follow_up_id(tenant_id: str, transition_id: str) -> UUID:
    """One transition stages at most one follow-up: its id is derived from the transition."""
    return uuid5(CLOSURE_NAMESPACE, f"{tenant_id}/follow-up/{transition_id}")


def stages_follow_up(status: TaskStatus, label: Label, cut_short: bool) -> bool:
    """SPEC M45: done only, with a residue label or a cut-short run."""
    return status is TaskStatus.done and (label in RESIDUE or cut_short)


class TaskClosure(Aggregate):
    class Noted(Aggregate.Created):
        tenant_id: str
        task_id: str
        transition_id: str
        status: str
        run_ids: list[str]
        closed_at: datetime

    class Appraised(Aggregate.Event):
        tenant_id: str
        task_id: str
        label: str
        positive: float
        negative: float
        cut_short: bool
        follow_up: bool

    class FollowUpStaged(Aggregate.Event):
        tenant_id: str
        task_id: str  # the original task, by id only (M46)
        follow_up_id: str
        label: str
        channels: list[str]
        cut_short: bool

    def __init__(
        self, tenant_id: str, task_id: str, transition_id: str, status: str,
        run_ids: list[str], closed_at: datetime,
    ) -> None:  # fmt: skip
        self.tenant_id = tenant_id
        self.task_id = task_id
        self.transition_id = transition_id
        self.status = status
        self.run_ids = run_ids
        self.appraised = False

    @classmethod
    def note(
        cls, *, tenant_id: str, task_id: str, transition_id: str, status: TaskStatus,
        run_ids: list[str], closed_at: datetime, at: datetime,
    ) -> "TaskClosure":  # fmt: skip
        return cls._create(
            cls.Noted,
            id=closure_id(tenant_id, transition_id),
            timestamp=at,
            tenant_id=tenant_id,
            task_id=task_id,
            transition_id=transition_id,
            status=status.value,
            run_ids=run_ids,
            closed_at=closed_at,
        )

    def appraise(
        self, *, label: Label, positive: float, negative: float, cut_short: bool,
        channels: list[str], at: datetime,
    ) -> bool:  # fmt: skip
        """SPEC M45: once per transition; True when this call appraised it."""
        if self.appraised:
            return False
        staged = stages_follow_up(TaskStatus(self.status), label, cut_short)
        self._appraised(
            tenant_id=self.tenant_id, task_id=self.task_id, label=label.value,
            positive=positive, negative=negative, cut_short=cut_short, follow_up=staged,
            timestamp=at,
        )  # fmt: skip
        if staged:
            self._staged(
                tenant_id=self.tenant_id, task_id=self.task_id,
                follow_up_id=str(follow_up_id(self.tenant_id, self.transition_id)),
                label=label.value, channels=sorted(set(channels)), cut_short=cut_short,
                timestamp=at,
            )  # fmt: skip
        return True

    @event(Appraised)
    def _appraised(
        self, tenant_id: str, task_id: str, label: str, positive: float, negative: float,
        cut_short: bool, follow_up: bool, timestamp: datetime,
    ) -> None:  # fmt: skip
        self.appraised = True

    @event(FollowUpStaged)
    def _staged(
        self, tenant_id: str, task_id: str, follow_up_id: str, label: str, channels: list[str],
        cut_short: bool, timestamp: datetime,
    ) -> None:  # fmt: skip
        pass
