"""Which eval events leave the service, so other services can follow agent quality."""

from dataclasses import replace
from typing import Any
from uuid import UUID

from contracts import topics
from contracts.evals import EvalCaseConfirmed, EvalCaseLifted, EvalRunCompleted
from services.evals.domain import EvalCase
from services.kafka.publication import Publication


def case_lifted(event: Any) -> EvalCaseLifted:
    return EvalCaseLifted(
        case_id=event.originator_id,
        tenant_id=event.tenant_id,
        ref=event.ref,
        source=UUID(event.source),
        agent=event.agent,
    )


def case_confirmed(event: Any) -> EvalCaseConfirmed:
    """Confirmed or sent back, the confirmer by role, never by id (decisions D139)."""
    confirmed = isinstance(event, EvalCase.Confirmed)
    return EvalCaseConfirmed(
        case_id=event.originator_id,
        tenant_id=event.tenant_id,
        confirmed=confirmed,
        confirmed_as="AgentMaintainer" if confirmed else None,
        case_path=f"/factory/evals/cases/{event.originator_id}",
    )


def run_completed(event: Any) -> EvalRunCompleted:
    return EvalRunCompleted(
        case_id=event.originator_id,
        tenant_id=event.tenant_id,
        run_id=UUID(event.run_id),
        agent=event.agent,
        ran_by=event.ran_by,
        model=event.model,
        passed=bool(event.summary["passed"]),
        scored=int(event.summary["scored"]),
        non_answers=int(event.summary["non_answers"]),
    )


LIFTED = Publication(
    event=EvalCase.Lifted,
    topic=topics.EVAL_CASE_LIFTED,
    payload=EvalCaseLifted,
    to_contract=case_lifted,
    key="caseId",
    title="EvalCaseLifted",
    description="A report became a draft eval case of an agent.",
)

CONFIRMED = Publication(
    event=EvalCase.Confirmed,
    topic=topics.EVAL_CASE_CONFIRMED,
    payload=EvalCaseConfirmed,
    to_contract=case_confirmed,
    key="caseId",
    title="EvalCaseConfirmed",
    description="An eval case was confirmed or sent back to draft (confirmed true or false); "
    "who confirmed it is read at casePath (decisions D139).",
)

RUN_COMPLETED = Publication(
    event=EvalCase.RunRecorded,
    topic=topics.EVAL_RUN_COMPLETED,
    payload=EvalRunCompleted,
    to_contract=run_completed,
    key="caseId",
    title="EvalRunCompleted",
    description="An eval case was run against its agent, with the verdict.",
)

PUBLICATIONS: tuple[Publication, ...] = (
    LIFTED,
    CONFIRMED,
    # Sending a case back to draft is told on the same topic, in the same contract.
    replace(CONFIRMED, event=EvalCase.Unconfirmed),
    RUN_COMPLETED,
)
