"""Comparisons: the same confirmed eval cases run against two runners, side by side.

A runner is named by the model the tenant's agent is asked to answer on (decisions D180):
``baseline`` (by default each case's own model: its pin, else the configured one) and
``candidate``. ``startedBy`` and ``ranBy`` are stamped by the server, never a client's.
"""

from typing import Any, Literal
from uuid import UUID

from pydantic import Field

from contracts.agent import Effort
from contracts.feedback import Contract
from contracts.scalars import Ref

STAMPED_COMPARISON_FIELDS = frozenset({"startedBy", "ranBy", "tenantId", "comparisonId"})
Side = Literal["baseline", "candidate"]
SIDES: tuple[Side, ...] = ("baseline", "candidate")


class Runner(Contract):
    """One side of a comparison: the model the agent is asked for (D180)."""

    model: Ref = Field(description="The model name sent to the agent as `requestedModel`.")


class StartComparison(Contract):
    """``POST /factory/evals/comparisons``: run the agent's confirmed cases on both runners."""

    agent: Ref = Field(description="The agent whose confirmed cases are compared.")
    candidate: Runner
    baseline: Runner | None = Field(
        default=None,
        description="Omitted: each case's current model (its pin, else the "
        "configured FEEDBACKLOOP_AGENT_MODEL).",
    )
    conversations: int = Field(default=3, ge=1, le=20, description="Per case and side.")
    effort: Effort = "medium"


class OpenComparison(Contract):
    """The comparison as the runner opens it, with the cases it will run (not a client's)."""

    comparison_id: UUID = Field(alias="comparisonId")
    agent: str
    baseline: str | None
    candidate: str
    conversations: int
    effort: Effort
    case_ids: list[UUID] = Field(alias="caseIds")


class RecordComparedCase(Contract):
    """One case on one side: its scored conversations, or why it did not run."""

    comparison_id: UUID = Field(alias="comparisonId")
    case_id: UUID = Field(alias="caseId")
    side: Side
    ran_by: str | None = Field(alias="ranBy")
    model: str | None
    threads: list[dict[str, Any]]
    summary: dict[str, Any] | None
    reason: str | None = None
