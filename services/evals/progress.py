"""Runs under way: how far each run of a case has got while its conversations run.

A run is recorded once, when its last conversation is scored (``RecordEvalRun``): until then
the log holds nothing of it. What a reader can be told meanwhile — which runs are running,
how many of their conversations are done — is kept here, in the process that runs them, and
forgotten when the run ends, recorded or not (decisions D80). It is a view of work in
progress, never a record: nothing is decided from it.
"""

from dataclasses import dataclass, replace
from datetime import datetime
from uuid import UUID


@dataclass(frozen=True)
class UnderWay:
    """One run while it runs: ``done`` of ``conversations`` scored so far."""

    run_id: UUID
    case_id: UUID
    ran_by: str
    conversations: int
    done: int
    started_at: datetime


class RunsUnderWay:
    """The runs this process is running now, by tenant. Written only by ``CaseRunner``."""

    def __init__(self) -> None:
        self._runs: dict[tuple[str, UUID], UnderWay] = {}

    def started(self, tenant_id: str, run: UnderWay) -> None:
        self._runs[(tenant_id, run.run_id)] = run

    def advanced(self, tenant_id: str, run_id: UUID, done: int) -> None:
        run = self._runs.get((tenant_id, run_id))
        if run is not None:
            self._runs[(tenant_id, run_id)] = replace(run, done=done)

    def ended(self, tenant_id: str, run_id: UUID) -> None:
        self._runs.pop((tenant_id, run_id), None)

    def of_case(self, tenant_id: str, case_id: UUID) -> list[UnderWay]:
        """The case's runs under way in this process, oldest first; another tenant's never."""
        found = [
            run
            for (tenant, _), run in self._runs.items()
            if tenant == tenant_id and run.case_id == case_id
        ]
        return sorted(found, key=lambda run: run.started_at)


UNDER_WAY = RunsUnderWay()
"""This process's runs under way: the runner writes it, the API and the console read it."""
