"""HTTP routes of appraisal's records beside the charter.

- ``POST /factory/appraisal/outcomes``: an owner records an outcome on a delivered draft by
  hand (SPEC M32, M33), under the rules the runtime's OwnerOutcomeRecorded follows: harm needs
  a commitment (422 ``commitment``); a draft with an active outcome takes another only when it
  names that one in ``supersedes`` (409), and a withdrawal must name it.
- ``POST /factory/appraisal/closures:appraise``: a manual nudge — the scheduler appraises
  waiting closures at every tick without a caller; this does the same now (M45), each
  transition once; answers what each read and whether it staged a follow-up.
"""

from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from contracts.appraisal_records import (
    AppraiseClosure,
    ClosuresAppraised,
    OutcomeRecorded,
    RecordOwnerOutcome,
)
from services.appraisal.closures import MAX_CLOSURES, appraise_waiting
from services.appraisal.outcomes import CONTRIBUTIONS, Contribution
from services.edge.auth import Principal
from services.edge.bodies import read_command
from services.edge.http import Http
from services.edge.openapi import body
from services.edge.parameters import command_id
from services.edge.problems import WRITE_ERRORS

OUTCOME_EXAMPLE = {
    "outcomeId": "oc-7",
    "runId": "run-42",
    "draftId": "draft-3",
    "verdict": "expectation_missed",
}


def records_routes(http: Http, table: Mapping[str, Contribution] = CONTRIBUTIONS) -> APIRouter:
    """Paths relative to appraisal's own router, which includes this one (its prefix is
    ``/factory/appraisal``)."""
    router = APIRouter()

    @router.post(
        "/outcomes",
        status_code=201,
        response_model=OutcomeRecorded,
        responses=WRITE_ERRORS,
        openapi_extra=body(RecordOwnerOutcome, OUTCOME_EXAMPLE),
    )
    async def record_outcome(
        request: Request,
        principal: Annotated[Principal, Depends(http.scope("factory.feedback.write"))],
    ) -> dict[str, Any]:
        """Record the owner's verdict on a run's delivered draft: `error_exposed`, `harm`
        (with `commitment`), `expectation_missed`, `no_issue`, or `withdrawn` (naming the
        active outcome in `supersedes`). A negative verdict replaces the draft's own
        contribution with one −1.0 (SPEC M32); the same `outcomeId` again changes nothing."""
        command = await read_command(request, RecordOwnerOutcome, frozenset())
        outcome = await http.execute(command, principal, command_id(None))
        return {
            "outcomeId": command.outcome_id,
            "draftId": command.draft_id,
            "active": outcome.result,
            "position": http.position(outcome, principal),
        }

    @router.post("/closures:appraise", response_model=ClosuresAppraised, responses=WRITE_ERRORS)
    async def appraise_closures(
        principal: Annotated[Principal, Depends(http.scope("factory.evaluation.run"))],
        limit: Annotated[int, Query(ge=1, le=MAX_CLOSURES)] = MAX_CLOSURES,
    ) -> dict[str, Any]:
        """Appraise now each closed-task transition still waiting (SPEC M45; the scheduler
        does it at every tick without a caller): the free readout of
        the runs that served it, decided once; a follow-up is staged only on `done` with a
        residue label or a cut-short run, citing the task by id (M46)."""

        async def execute(command: AppraiseClosure) -> Any:
            return await http.execute(command, principal, command_id(None))

        tenant = principal.tenant_id
        done = await appraise_waiting(http.pool, tenant, execute, http.clock, table, limit)
        return {"closures": done}

    return router
