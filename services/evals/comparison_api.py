"""HTTP routes of comparisons: start one (it runs, then answers the side-by-side) and read
one (decisions D180–D182)."""

import asyncio
import uuid
from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Depends, Request

from contracts.comparison_answers import ComparisonView
from contracts.comparisons import STAMPED_COMPARISON_FIELDS, StartComparison
from contracts.errors import Refused
from projections.eval_cases import case_refs
from services.edge.auth import Principal
from services.edge.bodies import read_command
from services.edge.http import Http
from services.edge.openapi import body
from services.edge.problems import READ_ERRORS, WRITE_ERRORS
from services.evals.comparing import Asker, Comparer, Sides, confirmed_case_ids
from services.evals.comparison import Comparison
from services.evals.comparison_diff import side_by_side
from services.evals.comparison_handlers import load_comparison
from services.evals.domain import EvalCase
from services.evals.runs import CaseRunner
from services.permissions.agent_register import require_maintainer
from services.permissions.rules import MAINTAINER, require
from services.store.event_store import EventStore

READ, RUN = "factory.evaluation.read", "factory.evaluation.run"


def comparison_view(comparison: Comparison, refs: dict[str, str]) -> dict[str, Any]:
    """The comparison as the API, the console and the gate show it."""
    return {
        "comparisonId": str(comparison.id),
        "agent": comparison.agent,
        "baseline": comparison.baseline,
        "candidate": comparison.candidate,
        "conversations": comparison.conversations,
        "effort": comparison.effort,
        "startedBy": comparison.started_by,
        "openedAt": comparison.created_on.isoformat(),
        "finished": comparison.finished,
        **side_by_side(comparison.case_ids, refs, comparison.results),
    }


async def read_comparison(
    store: EventStore, pool: Any, tenant_id: str, comparison_id: UUID
) -> dict[str, Any]:
    """A comparison of the tenant from the store (another tenant's is absent, 404)."""
    found = await asyncio.to_thread(load_comparison, store, tenant_id, comparison_id)
    refs = await case_refs(pool, tenant_id, [UUID(case) for case in found.case_ids])
    return comparison_view(found, refs)


def comparison_routes(http: Http, runner: CaseRunner) -> APIRouter:
    router = APIRouter(tags=["eval comparisons"])
    comparer = Comparer(runner, http.pool)

    @router.post(
        "/factory/evals/comparisons",
        status_code=201,
        response_model=ComparisonView,
        responses=WRITE_ERRORS,
        openapi_extra=body(
            StartComparison,
            {"agent": "Office/Agent/Coach", "candidate": {"model": "claude-haiku-4-5"}},
        ),
    )
    async def start_comparison(
        request: Request, principal: Annotated[Principal, Depends(http.scope(RUN))]
    ) -> dict[str, Any]:
        """Run the agent's confirmed cases on the baseline and on the candidate, as you, and
        answer them side by side (decisions D180–D182)."""
        start = await read_command(request, StartComparison, STAMPED_COMPARISON_FIELDS)
        if principal.service:  # SPEC W56, W57: conversations run as the person who asked
            raise Refused(
                "a comparison runs as the person who asked, never as a service identity",
                field="ranBy",
            )
        # The role rules before the agent is asked anything (decisions D23).
        require(principal.roles, MAINTAINER, "OpenComparison")
        case_ids = await confirmed_case_ids(http.pool, principal.tenant_id, start.agent)
        await asyncio.to_thread(
            require_maintainer, runner.store, principal.tenant_id, principal.subject,
            principal.roles, start.agent, "a comparison",
        )  # fmt: skip
        asker = Asker(principal.tenant_id, principal.subject, principal.roles)
        sides = Sides(None if start.baseline is None else start.baseline.model,
                      start.candidate.model)  # fmt: skip

        async def as_caller(case: EvalCase) -> tuple[str | None, str | None]:
            return principal.subject, None

        comparison = await comparer.compare(
            asker, uuid.uuid4(), start.agent, sides, case_ids,
            conversations=start.conversations, effort=start.effort, runs_as=as_caller,
        )  # fmt: skip
        refs = await case_refs(
            http.pool, principal.tenant_id, [UUID(c) for c in comparison.case_ids]
        )
        return comparison_view(comparison, refs)

    @router.get(
        "/factory/evals/comparisons/{comparison_id:uuid}",
        response_model=ComparisonView,
        responses=READ_ERRORS,
    )
    async def comparison(
        comparison_id: UUID, principal: Annotated[Principal, Depends(http.reading(READ))]
    ) -> dict[str, Any]:
        """One comparison, case by case side by side: verdicts, changed checks, differing
        conversations and each side's pass rate (decisions D182)."""
        return await read_comparison(runner.store, http.pool, principal.tenant_id, comparison_id)

    return router
