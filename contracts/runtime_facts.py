"""What the agents' runtime and the task system tell appraisal (SPEC M30–M33, M45, M52, M53).

Drafts, parked questions, owner stops and plan steps are facts of the agents' runtime, and a
task's closing is the task system's: they arrive like every other neighbour fact, read
tolerantly (a field we do not know is ignored). Some ride on RunCompleted (a run's drafts,
questions, stops and steps, ``contracts.neighbours``); two are events of their own:

- OwnerOutcomeRecorded (``factory.agents.v1.owner-outcome-recorded``): the owner's verdict on a
  run's delivered draft (M33). A person may record one by hand too (``RecordOwnerOutcome``,
  ``contracts.appraisal``), under the same rules.
- TaskClosed (``factory.tasks.v1.task-closed``): a task's transition into done or dropped, with
  the runs that served it (M45).

The fields are our decision (the seed names the facts, not a wire shape): decisions D36.
"""

from enum import StrEnum

from pydantic import Field

from contracts.feedback import Contract
from contracts.scalars import Instant, Name, Ref

MAX_ITEMS = 256  # drafts, questions, stops or steps one run reports
MAX_CALLS = 512  # calls under one step
MAX_RUNS_PER_TASK = 64


class Tolerant(Contract):
    """A neighbour's fact: frozen, unknown fields ignored."""

    model_config = Contract.model_config | {"extra": "ignore"}


class DraftStatus(StrEnum):
    """SPEC M28, M30: a pending draft has no verdict yet."""

    pending = "pending"
    sent_unchanged = "sent_unchanged"
    sent_edited = "sent_edited"
    rejected = "rejected"


class RunDraft(Tolerant):
    draft_id: Ref = Field(alias="draftId")
    status: DraftStatus


class QuestionStatus(StrEnum):
    """SPEC M30: parked and unanswered is no verdict; abandoned is the owner's."""

    parked = "parked"
    answered = "answered"
    abandoned = "abandoned"


class RunQuestion(Tolerant):
    question_id: Ref = Field(alias="questionId")
    status: QuestionStatus


class OwnerStop(Tolerant):
    """An explicit stop by the owner (SPEC M31). Process shutdown, parking and legacy
    interrupts are not stops and are not reported here (M30)."""

    stop_id: Ref = Field(alias="stopId")
    resumed: bool = Field(default=False, description="The owner re-prompted after the stop.")


class RunRequest(Tolerant):
    """A triaged request the run worked on (SPEC M28): closed without a linked draft it
    contributes −0.5; one with a draft is read through that draft's outcome instead."""

    request_id: Ref = Field(alias="requestId")
    closed: bool = Field(default=False, description="The request was closed.")
    draft_id: Ref | None = Field(
        default=None, alias="draftId", description="The draft linked to the request, if any."
    )


class CallStatus(StrEnum):
    succeeded = "succeeded"
    failed = "failed"
    refused = "refused"  # the model or the tool declined
    denied = "denied"  # the approver denied it
    in_flight = "in_flight"  # no result recorded when the step completed


class StepCall(Tolerant):
    status: CallStatus
    batch: int = Field(default=0, ge=0, le=1_000_000, description="Calls sent together.")


class CheckStatus(StrEnum):
    """SPEC M53: only passed and failed verify anything."""

    passed = "passed"
    failed = "failed"
    refused = "refused"
    unavailable = "unavailable"
    skipped = "skipped"


class StepCheck(Tolerant):
    command: Name
    status: CheckStatus | None = Field(default=None, description="None: it did not run.")
    rewritten: list[Name] = Field(
        default_factory=list,
        max_length=MAX_ITEMS,
        description="Other checks written after the step completed: reported, never taken.",
    )


class RunStep(Tolerant):
    """A plan step of the run and the calls made under it (SPEC M52, M53)."""

    step_id: Ref = Field(alias="stepId")
    completed: bool = False
    calls: list[StepCall] = Field(default_factory=list, max_length=MAX_CALLS)
    check: StepCheck | None = None


class OwnerVerdict(StrEnum):
    """SPEC M33."""

    error_exposed = "error_exposed"
    harm = "harm"  # needs the commitment it harmed
    expectation_missed = "expectation_missed"
    no_issue = "no_issue"
    withdrawn = "withdrawn"  # takes back the outcome it names


NEGATIVE_VERDICTS = frozenset(
    {OwnerVerdict.error_exposed, OwnerVerdict.harm, OwnerVerdict.expectation_missed}
)


class OwnerOutcomeFields(Contract):
    """An owner's verdict on a run's draft after delivery (SPEC M32, M33)."""

    outcome_id: Ref = Field(alias="outcomeId")
    run_id: Ref = Field(alias="runId")
    draft_id: Ref = Field(alias="draftId")
    verdict: OwnerVerdict
    commitment: Ref | None = Field(
        default=None, description="The recorded commitment harmed: required for harm."
    )
    supersedes: Ref | None = Field(
        default=None,
        description="The active outcome this one replaces; required for withdrawn and "
        "whenever the draft already has an active outcome.",
    )


class OwnerOutcomeRecorded(OwnerOutcomeFields):
    """From the agents' runtime: read tolerantly."""

    model_config = Tolerant.model_config
    recorded_at: Instant = Field(alias="recordedAt")


class TaskStatus(StrEnum):
    done = "done"
    dropped = "dropped"


class TaskClosed(Tolerant):
    """A task moved into done or dropped (SPEC M45); its id is what a follow-up cites (M46)."""

    task_id: Ref = Field(alias="taskId")
    transition_id: Ref = Field(
        alias="transitionId", description="This transition's id: it is appraised once."
    )
    status: TaskStatus
    run_ids: list[Ref] = Field(default_factory=list, alias="runIds", max_length=MAX_RUNS_PER_TASK)
    closed_at: Instant = Field(alias="closedAt")
