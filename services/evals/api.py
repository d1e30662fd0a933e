"""HTTP routes of eval cases: lift, read, patch, confirm, run."""

from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import StreamingResponse

from contracts.errors import NotFound
from contracts.eval_answers import (
    CaseList,
    CaseWithRuns,
    CaseWritten,
    RunRecorded,
    RunsUnderWay,
    ThreadRecord,
)
from contracts.evals import (
    STAMPED_EVAL_FIELDS,
    ConfirmEvalCase,
    ConfirmEvalCaseCommand,
    LiftEvalCase,
    PatchEvalCase,
    PatchEvalCaseCommand,
    RunEvalCase,
)
from contracts.scalars import PathNumber
from projections.eval_cases import get_case, get_thread, page_cases
from services.bus.decisions import Outcome
from services.edge.auth import Principal
from services.edge.bodies import no_body, read_command
from services.edge.exports import EXPORT_ANSWERS, FormatParameter, export_download
from services.edge.http import Http
from services.edge.openapi import body
from services.edge.parameters import PAGE, Before, IdempotencyKey, Limit, MinPosition, command_id
from services.edge.problems import READ_ERRORS, WRITE_ERRORS
from services.evals.export import runs_export
from services.evals.progress import UnderWay
from services.evals.runs import CaseRunner

READ, RUN = "factory.evaluation.read", "factory.evaluation.run"
MAX_THREADS = 1_000  # a run holds at most 20 conversations; any larger index is refused


def answer(position: str, outcome: Outcome) -> dict[str, Any]:
    case = outcome.result
    return {
        "caseId": str(case.case_id),
        "ref": case.ref,
        "agent": case.agent,
        "confirmedBy": case.confirmed_by,
        "position": position,
    }


def case_cursor(key: str | None) -> UUID | None:
    """``?before=`` of the cases: the last case's id, as this service sealed it."""
    return None if key is None else UUID(key)


def sealed_case(http: Http, case: dict[str, Any], principal: Principal) -> dict[str, Any]:
    """A case with its positions (its own, its last run's) as tokens of the tenant."""
    last_run = case["lastRun"] and http.with_position(case["lastRun"], principal)
    last_runs = [http.with_position(run, principal) for run in case["lastRuns"]]
    return {**http.with_position(case, principal), "lastRun": last_run, "lastRuns": last_runs}


def under_way(run: UnderWay) -> dict[str, Any]:
    return {
        "runId": str(run.run_id),
        "ranBy": run.ran_by,
        "conversations": run.conversations,
        "done": run.done,
        "startedAt": run.started_at.isoformat(),
    }


def eval_routes(http: Http, runner: CaseRunner) -> APIRouter:
    router = APIRouter(tags=["eval cases"])

    async def lift(principal: Principal, report_id: UUID) -> dict[str, Any]:
        command = LiftEvalCase(source=report_id)
        outcome = await http.execute(command, principal, f"lift/{report_id}")
        return answer(http.position(outcome, principal), outcome)

    @router.post(
        "/factory/evals/cases",
        status_code=201,
        response_model=CaseWritten,
        responses=WRITE_ERRORS,
        openapi_extra=body(LiftEvalCase, {"source": "0b6f3c1e-8a52-4c1e-9d55-3f0d2a7e9b10"}),
    )
    async def create_case(
        request: Request, principal: Annotated[Principal, Depends(http.scope(RUN))]
    ) -> dict[str, Any]:
        """Create a case with only its ``source`` (a report); the lift fills the rest."""
        command = await read_command(request, LiftEvalCase, STAMPED_EVAL_FIELDS)
        return await lift(principal, command.source)

    @router.post(
        "/factory/reports/{report_id:uuid}/lift",
        status_code=201,
        tags=["reports"],
        response_model=CaseWritten,
        responses=WRITE_ERRORS,
    )
    async def make_eval_case(
        report_id: UUID,
        request: Request,
        principal: Annotated[Principal, Depends(http.scope(RUN))],
    ) -> dict[str, Any]:
        """'Make this an eval case' on a submitted answer report (SPEC W41). Takes no body:
        ``confirmedBy`` and the rest are never the client's to say (W73)."""
        await no_body(request)
        return await lift(principal, report_id)

    @router.get("/factory/evals/cases", response_model=CaseList, responses=READ_ERRORS)
    async def cases(
        principal: Annotated[Principal, Depends(http.reading(READ))],
        agent: Annotated[str | None, Query(max_length=512)] = None,
        confirmed: bool | None = None,
        before: Before = None,
        limit: Limit = PAGE,
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """Cases by agent, with definition, last run and pass/fail, by agent then ref; a page
        at a time (`limit`, and `before`: the `next` of the previous page)."""
        await http.read_at("eval_cases", min_position, principal)
        found, next_page = await http.keyed_page(
            "cases",
            before,
            principal,
            lambda after: page_cases(
                http.pool,
                principal.tenant_id,
                agent=agent,
                confirmed=confirmed,
                after=case_cursor(after),
                limit=limit,
            ),
        )
        return {"items": [sealed_case(http, case, principal) for case in found], "next": next_page}

    @router.get(
        "/factory/evals/runs/export",
        response_class=StreamingResponse,
        responses={**EXPORT_ANSWERS, **READ_ERRORS},
    )
    async def export_runs(
        request: Request,
        principal: Annotated[Principal, Depends(http.reading(READ))],
        format: FormatParameter = "csv",
        agent: Annotated[str | None, Query(max_length=512)] = None,
        confirmed: bool | None = None,
    ) -> StreamingResponse:
        """Every run of the cases the cases' list shows under the same filters, newest first,
        with its summary and its conversations, as CSV or JSON Lines, streamed (decisions
        D210–D212). Granting it is a row of the audit."""
        export = runs_export(principal.tenant_id, agent=agent, confirmed=confirmed)
        return export_download(http, request, export, format, principal)

    @router.get(
        "/factory/evals/cases/{case_id:uuid}", response_model=CaseWithRuns, responses=READ_ERRORS
    )
    async def case(
        case_id: UUID,
        principal: Annotated[Principal, Depends(http.reading(READ))],
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """One case with its runs, newest first, each with every thread's score."""
        await http.read_at("eval_cases", min_position, principal)
        found = await get_case(http.pool, principal.tenant_id, case_id)
        if found is None:
            raise NotFound(f"no eval case {case_id}", caseId=str(case_id))
        return sealed_case(http, found, principal)

    @router.get(
        "/factory/evals/cases/{case_id:uuid}/runs/{run_id:uuid}/threads/{index}",
        response_model=ThreadRecord,
        responses=READ_ERRORS,
    )
    async def thread(
        case_id: UUID,
        run_id: UUID,
        index: Annotated[PathNumber, Path(ge=0, le=MAX_THREADS)],
        principal: Annotated[Principal, Depends(http.reading(READ))],
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """The record of one conversation of a run (the link in lastRun's threads)."""
        await http.read_at("eval_cases", min_position, principal)
        found = await get_thread(http.pool, principal.tenant_id, case_id, run_id, index)
        if found is None:
            raise NotFound(f"no thread {index} in run {run_id}", runId=str(run_id))
        return found

    @router.get(
        "/factory/evals/cases/{case_id:uuid}/runs/under-way",
        response_model=RunsUnderWay,
        responses=READ_ERRORS,
    )
    async def runs_under_way(
        case_id: UUID, principal: Annotated[Principal, Depends(http.reading(READ))]
    ) -> dict[str, Any]:
        """The case's runs still running in the process that answers, and how many of their
        conversations are scored so far; a run leaves the list when it is recorded (then it
        is the case's ``lastRun``) or has failed (decisions D80)."""
        return {
            "items": [
                under_way(run) for run in runner.under_way.of_case(principal.tenant_id, case_id)
            ]
        }

    @router.patch(
        "/factory/evals/cases/{case_id:uuid}",
        response_model=CaseWritten,
        responses=WRITE_ERRORS,
        openapi_extra=body(PatchEvalCase, {"mustAssert": "42", "mustGround": ["Office/Course"]}),
    )
    async def patch_case(
        case_id: UUID,
        request: Request,
        principal: Annotated[Principal, Depends(http.scope(RUN))],
        idempotency_key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Edit the definition; ``confirmedBy`` cannot be written by a client (W73).
        With an ``Idempotency-Key``, a repeat answers the case as it is now (SPEC C11)."""
        patch = await read_command(request, PatchEvalCase, STAMPED_EVAL_FIELDS)
        command = PatchEvalCaseCommand(case_id=case_id, patch=patch)
        outcome = await http.execute(
            command, principal, command_id(idempotency_key), idempotency_key
        )
        return answer(http.position(outcome, principal), outcome)

    @router.post(
        "/factory/evals/cases/{case_id:uuid}/confirm",
        response_model=CaseWritten,
        responses=WRITE_ERRORS,
        openapi_extra=body(ConfirmEvalCase, {"confirmed": True}),
    )
    async def confirm_case(
        case_id: UUID,
        request: Request,
        principal: Annotated[Principal, Depends(http.scope(RUN))],
        idempotency_key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Confirm (confirmedBy = you) or unconfirm (cleared): SPEC W74, W75.
        With an ``Idempotency-Key``, a repeat answers the case as it is now (SPEC C11)."""
        body = await read_command(request, ConfirmEvalCase, STAMPED_EVAL_FIELDS)
        command = ConfirmEvalCaseCommand(case_id=case_id, confirmed=body.confirmed)
        outcome = await http.execute(
            command, principal, command_id(idempotency_key), idempotency_key
        )
        return answer(http.position(outcome, principal), outcome)

    @router.post(
        "/factory/evals/cases/{case_id:uuid}/runs",
        status_code=201,
        response_model=RunRecorded,
        responses=WRITE_ERRORS,
        openapi_extra=body(RunEvalCase, {"conversations": 5, "effort": "medium"}),
    )
    async def run_case(
        case_id: UUID,
        request: Request,
        principal: Annotated[Principal, Depends(http.scope(RUN))],
    ) -> dict[str, Any]:
        """Run N conversations (default 5) as you, score each, record the run."""
        order = await read_command(request, RunEvalCase, STAMPED_EVAL_FIELDS)
        record, outcome = await runner.run(principal, case_id, order)
        # Answered from what was recorded, not from the read model: a slow projector must
        # not turn a recorded run into an error the client would retry (a second run).
        return {
            **record.model_dump(mode="json", by_alias=True, exclude={"night"}),
            "ranBy": principal.subject,
            "runner": "manual",  # a run asked for over HTTP is the caller's own (W58)
            "position": http.position(outcome, principal),
        }

    return router
