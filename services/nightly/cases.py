"""What a night needs of whoever runs eval cases: the evals context's case runner, handed in by
the composition root (``services.processes.bootstrap``), so the nightly context imports none of
it. A case and an agent client are the runner's own values; the night only passes them back.
"""

from typing import Any, Protocol
from uuid import UUID

from contracts.agent import AgentRequest, Effort
from contracts.evals import RecordEvalRun


class RunsCases(Protocol):
    @property
    def client(self) -> object | None:
        """The configured agent; None when there is none (a night plans no run then, W69)."""

    async def load(self, tenant_id: str, case_id: UUID) -> Any: ...

    def agent_for(self, case: Any, model: str | None = None) -> tuple[Any, str | None]: ...

    def request(
        self,
        case: Any,
        *,
        model: str | None,
        effort: Effort,
        run_id: UUID,
        index: int,
        submitter: str,
    ) -> AgentRequest: ...

    async def converse(
        self,
        client: Any,
        case: Any,
        request: AgentRequest,
        run_id: UUID,
        index: int,
        *,
        expected_model: str | None = None,
    ) -> dict[str, Any]: ...

    def recorded(
        self,
        case: Any,
        *,
        run_id: UUID,
        model: str | None,
        effort: Effort,
        threads: list[dict[str, Any]],
        night: str | None = None,
    ) -> RecordEvalRun: ...
