"""HTTP routes of appraisal's records beside the charter.

- ``POST /factory/appraisal/outcomes``: an owner records an outcome on a delivered draft by
  hand (SPEC M32, M33), under the rules the runtime's OwnerOutcomeRecorded follows: harm needs
  a commitment (422 ``commitment``); a draft with an active outcome takes another only when it
  names that one in ``supersedes`` (409), and a withdrawal must name it.
- ``POST /factory/appraisal/closures:appraise``: appraise the closed-task transitions noted and
  not yet appraised (M45), each once; answers what each read and whether it staged a
  follow-up.
"""

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from contracts.appraisal_records import (
    AppraiseClosure,
    ClosuresAppraised,
    OutcomeRecorded,
    RecordOwnerOutcome,
)
from contracts.errors import DomainError
from contracts.runtime_facts import TaskStatus
from projections import appraisal as facts_model
from services.appraisal.closure import stages_follow_up
from services.appraisal.closures import closure_reading
from services.appraisal.outcomes import CONTRIBUTIONS, Contribution
from services.appraisal.reads import read_charter
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
MAX_CLOSURES = 100


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
        """Appraise each closed-task transition still waiting (SPEC M45): the free readout of
        the runs that served it, decided once; a follow-up is staged only on `done` with a
        residue label or a cut-short run, citing the task by id (M46)."""
        return {"closures": await appraise_waiting(http, principal, table, limit)}

    return router


async def appraise_waiting(
    http: Http, principal: Principal, table: Mapping[str, Contribution], limit: int
) -> list[dict[str, Any]]:
    tenant = principal.tenant_id
    charter = (await read_charter(http.pool, tenant)).charter
    done: list[dict[str, Any]] = []
    for row in await facts_model.open_closures(http.pool, tenant, limit):
        now: datetime = http.clock()
        reading = await closure_reading(http.pool, tenant, row, charter, now, table)
        command = AppraiseClosure(
            transition_id=row["transition_id"], label=reading.label.value,
            positive=reading.valence.positive, negative=reading.valence.negative,
            cut_short=reading.cut_short, channels=list(reading.channels),
        )  # fmt: skip
        try:
            await http.execute(command, principal, command_id(None))
        except DomainError as error:
            done.append({"transitionId": row["transition_id"], "error": error.body()})
            continue
        staged = stages_follow_up(TaskStatus(row["status"]), reading.label, reading.cut_short)
        done.append({
            "transitionId": row["transition_id"], "taskId": row["task_id"],
            "label": reading.label.value, "valence": str(reading.valence),
            "cutShort": reading.cut_short, "followUp": staged,
        })  # fmt: skip
    return done
