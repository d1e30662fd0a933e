"""Eval cases: a wrong-answer report lifted into a repeatable test (SPEC W40–W77).

A case says: this prompt, in this context, must ground its answer in these nodes, must not
assert these values, and (if set) must assert this one. A run holds N real conversations with
the agent, each scored by three deterministic checks. ``confirmedBy`` and ``ranBy`` are
stamped by the server from the caller; a request that brings either is refused, naming it.
"""

from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import Field, StringConstraints

from contracts.agent import Effort
from contracts.feedback import Contract
from contracts.scalars import NotBlank, Ref

Value = Annotated[str, StringConstraints(min_length=1, max_length=2_000), NotBlank]
Prompt = Annotated[str, StringConstraints(min_length=1, max_length=16_000), NotBlank]

STAMPED_EVAL_FIELDS = frozenset(
    {"confirmedBy", "ranBy", "tenantId", "caseId", "lastRun", "liftedBy"}
)


class LiftEvalCase(Contract):
    """Create the case of a submitted answer report, carrying only its source (W44, W46)."""

    source: UUID = Field(description="The report's id.")


class PatchEvalCase(Contract):
    """Edit a case's definition; fields left out stay as they are."""

    prompt: Prompt | None = None
    context: list[Ref] | None = Field(default=None, max_length=50)
    must_ground: list[Ref] | None = Field(default=None, alias="mustGround", max_length=50)
    must_not_assert: list[Value] | None = Field(default=None, alias="mustNotAssert", max_length=50)
    must_assert: Value | None = Field(default=None, alias="mustAssert")
    model: Ref | None = Field(default=None, description="Pin the model the case runs on.")


class ConfirmEvalCase(Contract):
    """Confirm (stamps confirmedBy = the caller) or unconfirm (clears it): W72–W75."""

    confirmed: bool


class RunEvalCase(Contract):
    conversations: int = Field(default=5, ge=1, le=20, description="Run one after another.")
    effort: Effort = "medium"


class PatchEvalCaseCommand(Contract):
    case_id: UUID = Field(alias="caseId")
    patch: PatchEvalCase


class ConfirmEvalCaseCommand(Contract):
    case_id: UUID = Field(alias="caseId")
    confirmed: bool


class RecordEvalRun(Contract):
    """A finished run, as the runner hands it over to be recorded (not a client command)."""

    case_id: UUID = Field(alias="caseId")
    run_id: UUID = Field(alias="runId")
    model: str | None
    effort: Effort
    threads: list[dict[str, Any]]
    summary: dict[str, Any]
    night: str | None = Field(default=None, description="The night that ran it (W102).")


class EvalCaseLifted(Contract):
    """Published on ``evaluation.evals.v1.case-lifted``."""

    case_id: UUID = Field(alias="caseId")
    tenant_id: str = Field(alias="tenantId")
    ref: str
    source: UUID
    agent: str


class EvalCaseConfirmed(Contract):
    """Published on ``evaluation.evals.v2.case-confirmed``: a case was confirmed or sent back
    to draft. It names nobody (decisions D139): who confirmed it is read at ``casePath``;
    v1 carried the confirmer's id as ``confirmedBy``."""

    case_id: UUID = Field(alias="caseId")
    tenant_id: str = Field(alias="tenantId")
    confirmed: bool = Field(description="True: confirmed; false: sent back to draft.")
    confirmed_as: Literal["AgentMaintainer"] | None = Field(
        alias="confirmedAs",
        description="The role a case is confirmed in (an agent's maintainer); null when sent "
        "back to draft.",
    )
    case_path: str = Field(
        alias="casePath",
        description="`GET` this path of the API (scope factory.evaluation.read, the "
        "case's tenant) for the case; the person who confirmed it never rides on Kafka.",
    )


class EvalRunCompleted(Contract):
    """Published on ``evaluation.evals.v1.run-completed``."""

    case_id: UUID = Field(alias="caseId")
    tenant_id: str = Field(alias="tenantId")
    run_id: UUID = Field(alias="runId")
    agent: str
    ran_by: str = Field(alias="ranBy")
    model: str | None
    passed: bool
    scored: int
    non_answers: int = Field(alias="nonAnswers")
