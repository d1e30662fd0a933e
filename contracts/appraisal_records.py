"""Appraisal's commands beside the charter: an owner outcome recorded by hand, a paid pass's
numbers, and a closure's appraisal (SPEC M32, M33, M44, M45).

Strict, as every command of ours is: unknown fields refused, nothing coerced. No field holds
text a model wrote: a paid pass records words from closed sets and numbers (M44), and a
closure's appraisal the label and sums derived here.
"""

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, JsonValue

from contracts import feedback_examples as examples
from contracts.answers import Answer, Position, shown_as
from contracts.feedback import Contract
from contracts.runtime_facts import OwnerOutcomeFields
from contracts.scalars import Ref

MAX_RESULTS = 64
Magnitude = Annotated[float, Field(ge=-1.0, le=1.0, allow_inf_nan=False)]
Sum = Annotated[float, Field(ge=0.0, le=1e9, allow_inf_nan=False)]


class RecordOwnerOutcome(OwnerOutcomeFields):
    """An owner's verdict on a delivered draft, recorded by hand (``POST
    /factory/appraisal/outcomes``): the same rules as the runtime's OwnerOutcomeRecorded."""


class ProbeResult(StrEnum):
    """SPEC M44: mattered → regret, redundant → disappointment, inconclusive → unchanged;
    skipped (nothing to replay) is counted apart from inconclusive."""

    mattered = "mattered"
    redundant = "redundant"
    inconclusive = "inconclusive"
    skipped = "skipped"


class PassResult(Contract):
    cite: Ref = Field(description="The intervention asked about (its cite), or `appraiser`.")
    result: Literal["mattered", "redundant", "inconclusive", "skipped", "found", "nothing"]
    sign: Magnitude = 0.0
    agency: Literal["self", "owner", "other", "world"] = "self"
    visible: bool = False


class RecordPassResults(Contract):
    """A paid pass's numbers for one run (SPEC M44): recorded once per run and pass. An
    ``opinion`` is a model's word on an intervention, asked without a replay: recorded, never
    a label's input (decisions D153); ``probe`` is what older records of it are called."""

    run_id: Ref = Field(alias="runId")
    kind: Literal["opinion", "appraiser"]
    model: Ref = Field(description="The model that answered.")
    results: list[PassResult] = Field(max_length=MAX_RESULTS)


class AppraiseClosure(Contract):
    """The free readout of a closed task's runs, decided once per transition (SPEC M45)."""

    transition_id: Ref = Field(alias="transitionId")
    label: Ref
    positive: Sum
    negative: Sum
    cut_short: bool = Field(alias="cutShort")
    channels: list[Ref] = Field(default_factory=list, max_length=8)


OUTCOME_RECORDED: dict[str, JsonValue] = {
    "outcomeId": "oc-7",
    "draftId": "draft-3",
    "active": "oc-7",
    "position": examples.FEEDBACK_WRITTEN["position"],
}
CLOSURES_APPRAISED: dict[str, JsonValue] = {
    "closures": [
        {"transitionId": "tr-81", "taskId": "task-1a2b3c4d", "label": "disappointment",
         "valence": "\u22121.0", "cutShort": False, "followUp": True, "error": None},
    ]
}  # fmt: skip


class OutcomeRecorded(Answer):
    model_config = shown_as(OUTCOME_RECORDED)

    outcome_id: str = Field(alias="outcomeId")
    draft_id: str = Field(alias="draftId")
    active: str | None = Field(description="The draft's active outcome now; null if withdrawn.")
    position: Position


class FollowUpStaged(Contract):
    """A follow-up task staged by a closure appraisal, for the task system to take (SPEC M45).
    Composed only of fields this service minted: it cites the original task by id, never by
    its name (M46)."""

    follow_up_id: Ref = Field(alias="followUpId")
    tenant_id: Ref = Field(alias="tenantId")
    task_id: Ref = Field(alias="taskId", description="The closed task it follows up.")
    label: Ref = Field(description="The closure's label (a residue label), or the one it had.")
    channels: list[Ref] = Field(description="The channels that signed something.")
    cut_short: bool = Field(alias="cutShort", description="A run was cut short (a stop).")
    staged_at: str = Field(alias="stagedAt")


class ClosureAppraised(Answer):
    transition_id: str = Field(alias="transitionId")
    task_id: str | None = Field(default=None, alias="taskId")
    label: str | None = None
    valence: str | None = None
    cut_short: bool | None = Field(default=None, alias="cutShort")
    follow_up: bool | None = Field(
        default=None, alias="followUp", description="A follow-up task was staged (M45)."
    )
    error: JsonValue = Field(default=None, description="Why it was not appraised, if so.")


class ClosuresAppraised(Answer):
    model_config = shown_as(CLOSURES_APPRAISED)

    closures: list[ClosureAppraised]
