"""The Night aggregate: one per tenant and UTC date, planned once, driven to its end.

SPEC W87–W92. Its id derives from (tenant, ``night/{date}``), so a second planner's create
loses (W92). It is created as the service with its inputs and status Running (W87), holding
``selected`` and a line for every confirmed case that does not run (W88). Each conversation
is recorded as it finishes, so a crash mid-case resumes the missing ones only (W91); each
case adds its line as it finishes (W89); the end writes Succeeded or Warning, finishedAt and
the note (W90). Every step is idempotent: a repeat after a lost acknowledgement is a no-op.
"""

from datetime import datetime
from typing import Any
from uuid import UUID, uuid5

from eventsourcing.domain import Aggregate, event

from services.store.sealing import Personal

NIGHT_NAMESPACE = UUID("8e0f6d52-2b7a-5c1e-9f43-6a1d0c7b5e21")
RUNNING, SUCCEEDED, WARNING = "Running", "Succeeded", "Warning"


def night_name(date: str) -> str:
    return f"night/{date}"


def night_id(tenant_id: str, date: str) -> UUID:
    return uuid5(NIGHT_NAMESPACE, f"{tenant_id}/{night_name(date)}")


def night_run_id(date: str, case_id: UUID) -> UUID:
    """The run a night makes of a case (W91): the same after a restart, so the conversations
    recorded before it belong to the run that finishes. Case ids are unique across tenants."""
    return uuid5(NIGHT_NAMESPACE, f"{night_name(date)}/{case_id}")


class Night(Aggregate):
    class Planned(Aggregate.Created):
        tenant_id: str
        date: str
        ref: str
        inputs: dict[str, Any]
        selected: list[dict[str, Any]]
        lines: list[dict[str, Any]]
        note: str

    class ConversationRecorded(Aggregate.Event):
        # The agent's answer to the case's prompt (the reporter's words) and its tool calls,
        # under the case's key, as the run's threads are (D130).
        personal = Personal(text=("thread.text", "thread.toolCalls"), of="case_id")

        tenant_id: str
        case_id: str
        index: int
        thread: dict[str, Any]

    class CaseFinished(Aggregate.Event):
        tenant_id: str
        line: dict[str, Any]

    class Finished(Aggregate.Event):
        tenant_id: str
        status: str
        finished_at: str
        note: str

    def __init__(
        self,
        tenant_id: str,
        date: str,
        ref: str,
        inputs: dict[str, Any],
        selected: list[dict[str, Any]],
        lines: list[dict[str, Any]],
        note: str,
    ) -> None:
        self.tenant_id, self.date, self.ref = tenant_id, date, ref
        self.inputs, self.selected, self.lines, self.note = inputs, selected, lines, note
        self.status = RUNNING
        self.finished_at: str | None = None
        self.conversations: dict[str, dict[int, dict[str, Any]]] = {}

    @classmethod
    def plan(
        cls,
        *,
        tenant_id: str,
        date: str,
        inputs: dict[str, Any],
        selected: list[dict[str, Any]],
        lines: list[dict[str, Any]],
        note: str,
        at: datetime,
    ) -> "Night":
        return cls._create(
            cls.Planned,
            id=night_id(tenant_id, date),
            timestamp=at,
            tenant_id=tenant_id,
            date=date,
            ref=f"_EvalNights/{date}",  # W87: Feedback/_EvalNights/{yyyy-MM-dd}
            inputs=inputs,
            selected=selected,
            lines=lines,
            note=note,
        )

    @property
    def running(self) -> bool:
        return self.status == RUNNING

    def has_line(self, case_id: str) -> bool:
        return any(line["case"] == case_id for line in self.lines)

    def pending(self) -> list[dict[str, Any]]:
        """The selected cases with no line yet: what a (resumed) drive still runs (W91)."""
        return [s for s in self.selected if not self.has_line(s["case"])]

    def threads(self, case_id: str) -> dict[int, dict[str, Any]]:
        return self.conversations.get(case_id, {})

    def record_conversation(
        self, case_id: str, index: int, thread: dict[str, Any], *, at: datetime
    ) -> None:
        if not self.running or self.has_line(case_id) or index in self.threads(case_id):
            return  # recorded already: a finished conversation never repeats (W91)
        self._conversation_recorded(
            tenant_id=self.tenant_id, case_id=case_id, index=index, thread=thread, timestamp=at
        )

    @event(ConversationRecorded)
    def _conversation_recorded(
        self, tenant_id: str, case_id: str, index: int, thread: dict[str, Any], timestamp: datetime
    ) -> None:
        self.conversations.setdefault(case_id, {})[index] = thread

    def finish_case(self, line: dict[str, Any], *, at: datetime) -> None:
        if not self.running or self.has_line(line["case"]):
            return
        self._case_finished(tenant_id=self.tenant_id, line=line, timestamp=at)

    @event(CaseFinished)
    def _case_finished(self, tenant_id: str, line: dict[str, Any], timestamp: datetime) -> None:
        self.lines = [*self.lines, line]

    def finish(self, *, at: datetime) -> None:
        """W90: Warning when a case was skipped or failed, else Succeeded. Over-cap lines alone
        are no warning (our choice): the cap is how the night is bounded, and the note says it
        was reached."""
        if not self.running:
            return  # W92: a night ends once
        troubled = any(line["outcome"] in ("skipped", "failed") for line in self.lines)
        self._finished(
            tenant_id=self.tenant_id,
            status=WARNING if troubled else SUCCEEDED,
            finished_at=at.isoformat(),
            note=self.note,
            timestamp=at,
        )

    @event(Finished)
    def _finished(
        self, tenant_id: str, status: str, finished_at: str, note: str, timestamp: datetime
    ) -> None:
        self.status, self.finished_at = status, finished_at
