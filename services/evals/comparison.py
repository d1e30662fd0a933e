"""The Comparison aggregate: an agent's confirmed cases run on two runners (decisions D181).

Opened with the cases it will run, both runners and the conversations per side; then one
event per case and side as it finishes (a case may also be recorded as not run, with why).
It is apart from the cases: a comparison's runs never become a case's ``lastRun``, its
history, the night's order or the digest's health line, so those stay comparable by
(``runner``, ``ranBy``) as before (SPEC W58).
"""

from datetime import datetime
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from contracts.comparisons import SIDES
from contracts.errors import Refused
from services.store.sealing import Personal


class Comparison(Aggregate):
    class Opened(Aggregate.Created):
        personal = Personal(names={"started_by": "whoever started the comparison"})

        tenant_id: str
        agent: str
        baseline: str | None
        candidate: str
        conversations: int
        effort: str
        case_ids: list[str]
        started_by: str

    class CaseCompared(Aggregate.Event):
        # The agent's answers to the case's prompt (the reporter's words) and its tool calls,
        # under the case's key, as a case's own runs are (D130); who it ran as under theirs.
        personal = Personal(
            text=("threads[].text", "threads[].toolCalls"),
            of="case_id",
            names={"ran_by": "whoever the case ran as"},
        )

        tenant_id: str
        case_id: str
        side: str
        ran_by: str | None
        model: str | None
        threads: list[dict[str, Any]]
        summary: dict[str, Any] | None
        reason: str | None

    def __init__(
        self,
        tenant_id: str,
        agent: str,
        baseline: str | None,
        candidate: str,
        conversations: int,
        effort: str,
        case_ids: list[str],
        started_by: str,
    ) -> None:
        self.tenant_id, self.agent = tenant_id, agent
        self.baseline, self.candidate = baseline, candidate
        self.conversations, self.effort = conversations, effort
        self.case_ids, self.started_by = case_ids, started_by
        self.results: dict[tuple[str, str], dict[str, Any]] = {}

    @classmethod
    def open(
        cls,
        *,
        comparison_id: UUID,
        tenant_id: str,
        agent: str,
        baseline: str | None,
        candidate: str,
        conversations: int,
        effort: str,
        case_ids: list[UUID],
        started_by: str,
        at: datetime,
    ) -> "Comparison":
        if not case_ids:
            raise Refused(f"agent {agent!r} has no confirmed eval case to compare", field="agent")
        return cls._create(
            cls.Opened,
            id=comparison_id,
            timestamp=at,
            tenant_id=tenant_id,
            agent=agent,
            baseline=baseline,
            candidate=candidate,
            conversations=conversations,
            effort=effort,
            case_ids=[str(case) for case in case_ids],
            started_by=started_by,
        )

    def record(
        self,
        *,
        case_id: UUID,
        side: str,
        ran_by: str | None,
        model: str | None,
        threads: list[dict[str, Any]],
        summary: dict[str, Any] | None,
        reason: str | None,
        at: datetime,
    ) -> None:
        """One case on one side; a repeat (a retry after a lost answer) records nothing."""
        if str(case_id) not in self.case_ids:
            raise Refused(f"case {case_id} is not in this comparison", field="caseId")
        if side not in SIDES:
            raise Refused(f"side must be one of {', '.join(SIDES)}", field="side")
        if (str(case_id), side) in self.results:
            return
        self._case_compared(
            tenant_id=self.tenant_id, case_id=str(case_id), side=side, ran_by=ran_by,
            model=model, threads=threads, summary=summary, reason=reason, timestamp=at,
        )  # fmt: skip

    @event(CaseCompared)
    def _case_compared(
        self,
        tenant_id: str,
        case_id: str,
        side: str,
        ran_by: str | None,
        model: str | None,
        threads: list[dict[str, Any]],
        summary: dict[str, Any] | None,
        reason: str | None,
        timestamp: datetime,
    ) -> None:
        self.results[(case_id, side)] = {
            "ranBy": ran_by, "model": model, "threads": threads, "summary": summary,
            "reason": reason, "at": timestamp.isoformat(),
        }  # fmt: skip

    @property
    def finished(self) -> bool:
        return len(self.results) == 2 * len(self.case_ids)
