"""Running a comparison: each confirmed case of the agent on the baseline, then on the
candidate, the same number of conversations at the same effort, each scored by the same
deterministic checks as any run (SPEC W55; decisions D180, D181).

Who asks is apart from how it runs, as for one case's run (``services.evals.runs``): over HTTP
every conversation runs as the person who asked (W56, W57); the CI gate runs each case as its
confirmer, asked again just before the case runs, as the night does (W101, decisions D103).
``runs_as`` says it per case: the person to run as, or the reason the case does not run. A
case that faults is recorded with its error and the comparison goes on (as W103 for nights).
"""

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID, uuid5

import asyncpg

from contracts.agent import Effort
from contracts.comparisons import OpenComparison, RecordComparedCase, Side
from contracts.errors import NotConfigured, Refused
from projections.eval_cases import list_cases
from services.bus.issued import Issued
from services.evals.agents import AgentClient
from services.evals.comparison import Comparison
from services.evals.comparison_handlers import load_comparison
from services.evals.domain import EvalCase
from services.evals.runs import CaseRunner

log = logging.getLogger(__name__)

MAX_ERROR_TEXT = 500
# Whom a case runs as (the person) or why it does not run (None, reason).
RunsAs = Callable[[EvalCase], Awaitable[tuple[str | None, str | None]]]


@dataclass(frozen=True)
class Asker:
    """Who the comparison's own commands are issued as: a person with their roles, or the
    service (roles None) for the CI gate."""

    tenant_id: str
    actor: str
    roles: frozenset[str] | None
    service: bool = False


@dataclass(frozen=True)
class Sides:
    """The model of each side (None: the case's own) and, for a candidate named by its
    endpoint (``candidate`` is then its URL), the agent at that endpoint (D180)."""

    baseline: str | None
    candidate: str
    candidate_client: AgentClient | None = None


async def confirmed_case_ids(pool: asyncpg.Pool, tenant_id: str, agent: str) -> list[UUID]:
    """The agent's confirmed cases now, by ref: what a comparison runs. None is refused
    naming ``agent`` before anything runs or is recorded."""
    found = await list_cases(pool, tenant_id, agent=agent, confirmed=True)
    if not found:
        raise Refused(f"agent {agent!r} has no confirmed eval case to compare", field="agent")
    return [UUID(case["caseId"]) for case in found]


class Comparer:
    def __init__(self, runner: CaseRunner, pool: asyncpg.Pool) -> None:
        self.runner, self.pool = runner, pool

    @property
    def clock(self) -> Callable[[], datetime]:
        return self.runner.clock

    async def compare(
        self,
        asker: Asker,
        comparison_id: UUID,
        agent: str,
        sides: Sides,
        case_ids: list[UUID],
        *,
        conversations: int,
        effort: Effort,
        runs_as: RunsAs,
    ) -> Comparison:
        if self.runner.client is None:  # W69: nothing runs, and the answer says why
            raise NotConfigured("no agent is configured (FEEDBACKLOOP_AGENT_URL): nothing ran")
        opening = OpenComparison(
            comparison_id=comparison_id, agent=agent, baseline=sides.baseline,
            candidate=sides.candidate, conversations=conversations, effort=effort,
            case_ids=case_ids,
        )  # fmt: skip
        await self._issue(asker, opening, f"comparison/{comparison_id}")
        for case_id in case_ids:
            for side in ("baseline", "candidate"):
                record = await self._one(
                    asker.tenant_id, comparison_id, case_id, side, sides, conversations,
                    effort, runs_as,
                )  # fmt: skip
                await self._issue(asker, record, f"comparison/{comparison_id}/{case_id}/{side}")
        found: Comparison = await asyncio.to_thread(
            load_comparison, self.runner.store, asker.tenant_id, comparison_id
        )
        return found

    async def _one(
        self,
        tenant_id: str,
        comparison_id: UUID,
        case_id: UUID,
        side: Side,
        sides: Sides,
        conversations: int,
        effort: Effort,
        runs_as: RunsAs,
    ) -> RecordComparedCase:
        """One case on one side, scored; or recorded with why it did not run."""
        # A candidate named by its endpoint is asked for the baseline's model there (D180).
        same_model = side == "baseline" or sides.candidate_client is not None
        model = sides.baseline if same_model else sides.candidate

        def not_run(reason: str, person: str | None = None) -> RecordComparedCase:
            return RecordComparedCase(
                comparison_id=comparison_id, case_id=case_id, side=side, ran_by=person,
                model=model, threads=[], summary=None, reason=reason,
            )  # fmt: skip

        person: str | None = None
        try:
            case = await self.runner.load(tenant_id, case_id)
            person, reason = await runs_as(case)
            if person is None:
                return not_run(reason or "not-run")
            client, model = self.runner.agent_for(case, model)
            if side == "candidate" and sides.candidate_client is not None:
                client = sides.candidate_client
            run_id = uuid5(comparison_id, f"{case_id}/{side}")
            threads = []
            for index in range(1, conversations + 1):
                request = self.runner.request(
                    case, model=model, effort=effort, run_id=run_id, index=index, submitter=person
                )
                thread = await self.runner.converse(
                    client, case, request, run_id, index, expected_model=model
                )
                thread["link"] = f"/factory/evals/comparisons/{comparison_id}"
                threads.append(thread)
            summary = self.runner.recorded(
                case, run_id=run_id, model=model, effort=effort, threads=threads
            ).summary
        except Exception as error:  # the case's line says so, the comparison goes on
            log.warning("comparison %s: case %s failed", comparison_id, case_id, exc_info=True)
            return not_run(f"failed: {type(error).__name__}: {error}"[:MAX_ERROR_TEXT], person)
        return RecordComparedCase(
            comparison_id=comparison_id, case_id=case_id, side=side, ran_by=person,
            model=model, threads=threads, summary=summary,
        )  # fmt: skip

    async def _issue(self, asker: Asker, command: Any, command_id: str) -> None:
        await self.runner.bus.execute(
            Issued(
                command, asker.tenant_id, asker.actor, command_id, self.clock(),
                roles=asker.roles, service=asker.service,
            )
        )  # fmt: skip
