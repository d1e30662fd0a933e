"""Nights: the nightly runner's commands (not a client's) and what the API answers of nights.

SPEC W78–W103, §3.8. A night's line is ``{case, outcome: ran|skipped|over-cap|failed,
reason?, model?, effort?, score?, threads?, at}``.
"""

from datetime import date, datetime
from typing import Any, Literal
from uuid import UUID

from pydantic import Field

from contracts import night_examples as examples
from contracts.answers import Answer, Cursor, Order, Timestamp, shown_as
from contracts.feedback import Contract

NightStatus = Literal["Running", "Succeeded", "Warning"]
Outcome = Literal["ran", "skipped", "over-cap", "failed"]


# ---- Commands: issued by the nightly runner as the service ----------------------------------


class PlanTenantNight(Contract):
    """Create the night of one tenant once, with its plan (W87, W88)."""

    date: date
    now: datetime
    inputs: dict[str, Any]
    selected: list[dict[str, Any]]
    lines: list[dict[str, Any]]
    note: str


class RecordNightConversation(Contract):
    """One finished conversation of a selected case (W91)."""

    night_id: UUID = Field(alias="nightId")
    case_id: UUID = Field(alias="caseId")
    index: int = Field(ge=1)
    thread: dict[str, Any]


class FinishNightCase(Contract):
    """A case's line, as the case finishes (W89, W103)."""

    night_id: UUID = Field(alias="nightId")
    line: dict[str, Any]


class FinishNight(Contract):
    """The end: Succeeded or Warning, finishedAt, the note (W90)."""

    night_id: UUID = Field(alias="nightId")


# ---- Answers of the API ---------------------------------------------------------------------


class NightScore(Answer):
    passed: bool
    scored: int
    non_answers: int = Field(alias="nonAnswers")
    looked_rate: float | None = Field(alias="lookedRate")
    correct_rate: float | None = Field(alias="correctRate")


class NightLine(Answer):
    case: str = Field(json_schema_extra={"format": "uuid"})
    outcome: Outcome
    reason: str | None = None
    model: str | None = None
    effort: str | None = None
    score: NightScore | None = None
    threads: list[str] | None = Field(default=None, description="Links to the conversations.")
    run_id: str | None = Field(default=None, alias="runId")
    rerun: str | None = Field(
        default=None,
        description="Why the case came first: the changes of its agent since its last run "
        "(`re-run first: model changed a → b at …`, decisions D242).",
    )
    at: Timestamp


class SelectedCase(Answer):
    case: str = Field(json_schema_extra={"format": "uuid"})
    ref: str
    confirmer: str
    model: str
    effort: str
    rerun: str | None = Field(
        default=None, description="Why it runs first: a change of its agent (D242)."
    )


class NightCounts(Answer):
    selected: int
    ran: int
    skipped: int
    over_cap: int = Field(alias="overCap")
    failed: int


class NightSummary(Answer):
    date: str = Field(json_schema_extra={"format": "date"})
    status: NightStatus
    counts: NightCounts
    planned_at: Timestamp = Field(alias="plannedAt")
    finished_at: Timestamp | None = Field(alias="finishedAt")
    position: Order


class NightList(Answer):
    model_config = shown_as(examples.NIGHT_LIST)

    items: list[NightSummary]
    next: Cursor


class NightView(NightSummary):
    model_config = shown_as(examples.NIGHT_VIEW)

    ref: str
    inputs: dict[str, Any] = Field(description="The settings and time the night was planned with.")
    selected: list[SelectedCase]
    note: str
    lines: list[NightLine]
    conversations: int = Field(description="Conversations recorded so far.")
