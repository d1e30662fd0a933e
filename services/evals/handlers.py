"""Command handlers of eval cases: load, decide, hand back for the bus to append."""

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from contracts.errors import NotFound, Refused
from contracts.evals import (
    ConfirmEvalCaseCommand,
    LiftEvalCase,
    PatchEvalCaseCommand,
    RecordEvalRun,
)
from services.bus.decisions import Decision
from services.bus.issued import Issued
from services.evals.domain import EvalCase, case_id_for
from services.evals.lift import SourceReport, lift
from services.permissions.agent_register import require_maintainer
from services.store.event_store import EventStore
from services.store.owners import load_owned

# PatchEvalCase's fields as the aggregate names them.
PATCHABLE = {
    "prompt": "prompt",
    "context": "context",
    "mustGround": "must_ground",
    "mustNotAssert": "must_not_assert",
    "mustAssert": "must_assert",
    "model": "model",
}


NULLABLE = {"mustAssert", "model"}  # null unpins the model, or drops the expected value


@dataclass(frozen=True)
class CaseState:
    case_id: UUID
    ref: str
    agent: str
    confirmed_by: str | None


def load_case(store: EventStore, tenant_id: str, case_id: UUID) -> EvalCase:
    case: EvalCase = load_owned(store, tenant_id, case_id, "eval case")
    return case


def state(case: EvalCase) -> CaseState:
    return CaseState(case.id, case.ref, case.agent, case.confirmed_by)


def lift_eval_case(store: EventStore, issued: Issued) -> Decision:
    """Create the case with its source, and lift the rest from the report (W44–W50)."""
    command = issued.command
    assert isinstance(command, LiftEvalCase)
    report: SourceReport = load_owned(store, issued.tenant_id, command.source, "report")
    report.check_visible_to(issued.actor)  # another person's draft is absent
    definition = lift(report)
    case_id = case_id_for(issued.tenant_id, command.source)
    try:
        return Decision([], state(load_case(store, issued.tenant_id, case_id)))
    except NotFound:
        pass
    case = EvalCase.create(
        case_id=case_id,
        tenant_id=issued.tenant_id,
        source=command.source,
        agent_path=definition.agent,
        at=issued.at,
    )
    case.lift(definition, at=issued.at)
    return Decision([case], state(case))


def patch_eval_case(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, PatchEvalCaseCommand)
    case = load_case(store, issued.tenant_id, command.case_id)
    maintained(store, issued, case, "patching this case")
    given: dict[str, Any] = command.patch.model_dump(by_alias=True, exclude_unset=True)
    for name, value in given.items():
        if value is None and name not in NULLABLE:
            raise Refused(f"{name} cannot be cleared", field=name)
    case.patch({PATCHABLE[name]: value for name, value in given.items()}, at=issued.at)
    return Decision([case], state(case))


def confirm_eval_case(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, ConfirmEvalCaseCommand)
    case = load_case(store, issued.tenant_id, command.case_id)
    maintained(store, issued, case, "confirming this case")
    case.confirm(command.confirmed, by=issued.actor, by_service=issued.service, at=issued.at)
    return Decision([case], state(case))


def record_eval_run(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, RecordEvalRun)
    case = load_case(store, issued.tenant_id, command.case_id)
    maintained(store, issued, case, "a run of this case")
    case.record_run(
        run_id=command.run_id,
        ran_by=issued.actor,
        model=command.model,
        effort=command.effort,
        threads=command.threads,
        summary=command.summary,
        at=issued.at,
        night=command.night,
    )
    return Decision([case], state(case))


def maintained(store: EventStore, issued: Issued, case: EvalCase, what: str) -> None:
    """SPEC C52, decisions D23: a case is confirmed, patched and run by a maintainer of its
    agent, as the register names them."""
    require_maintainer(store, issued.tenant_id, issued.actor, issued.roles, case.agent or "", what)


def shown(store: EventStore, issued: Issued) -> CaseState:
    """What a case shows now: the answer to a repeated patch or confirm (the same
    Idempotency-Key and request), which must not be decided again."""
    return state(load_case(store, issued.tenant_id, issued.command.case_id))  # type: ignore[attr-defined]
