"""What the HTTP API answers: one model per response body, so ``/openapi.json`` declares every
answer and a route that drifts from its model fails instead of publishing an
undeclared shape. Answers are read by other people's code: every field is declared, none is
added on the way out (``extra="forbid"``). Each model a route answers carries its examples
(the story of ``contracts/example_story.py``, told context by context in the ``*_examples``
modules beside it), so the document shows a real answer for every success and a test holds
model, example and document together.
"""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.config import JsonDict, JsonValue

from contracts import feedback_examples, privacy_examples, report_examples
from contracts.reports import Category, Kind, ReviewStatus

Timestamp = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
Position = Annotated[
    str,
    Field(
        description="An opaque token of your tenant: pass it as `minPosition` to read your "
        "write. Not a number, not comparable.",
        examples=[feedback_examples.FEEDBACK_WRITTEN["position"]],
    ),
]
Cursor = Annotated[
    str | None, Field(description="Pass as `before` for the next page; null on the last.")
]
Order = Annotated[
    str, Field(description="An opaque token of your tenant; also a valid `minPosition`.")
]


class Answer(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


def shown_as(*answers: JsonDict) -> ConfigDict:
    """An answer model's examples, as JSON it is answered in (by alias): the schema carries
    them and ``services/edge/openapi.py`` shows the first as each response's example. A subclass
    names its own, or it would show its parent's (which it refuses: ``extra="forbid"``)."""
    shown: list[JsonValue] = [*answers]
    return ConfigDict(json_schema_extra={"examples": shown})


class FeedbackWritten(Answer):
    model_config = shown_as(feedback_examples.FEEDBACK_WRITTEN)

    feedback_id: str = Field(alias="feedbackId", json_schema_extra={"format": "uuid"})
    position: Position


class FeedbackItem(Answer):
    feedback_id: str = Field(alias="feedbackId")
    tenant_id: str = Field(alias="tenantId")
    project_id: str = Field(alias="projectId")
    subject_kind: str = Field(alias="subjectKind")
    subject_ref: str = Field(alias="subjectRef")
    kind: str
    rating: int | None
    comment_ref: str | None = Field(alias="commentRef")
    corrected_artifact_ref: str | None = Field(alias="correctedArtifactRef")
    given_by: str = Field(alias="givenBy")
    given_at: Timestamp = Field(alias="givenAt")
    trace_id: str | None = Field(alias="traceId", description="W3C trace id of the answer.")
    span_id: str | None = Field(alias="spanId", description="W3C span id of the answer.")
    gen_ai: dict[str, str] | None = Field(
        alias="genAi", description="The OpenTelemetry GenAI attributes sent with it."
    )
    position: Order


class FeedbackPage(Answer):
    model_config = shown_as(feedback_examples.FEEDBACK_PAGE)

    items: list[FeedbackItem]
    next: Cursor


class ItemProblem(Answer):
    field: str
    message: str


class FeedbackItemWritten(Answer):
    """An item of a batch that was recorded (201) or repeated one recorded before (200)."""

    status: Literal[200, 201]
    feedback_id: str = Field(alias="feedbackId", json_schema_extra={"format": "uuid"})


class FeedbackItemRefused(Answer):
    """An item of a batch that was refused, in the one error shape with its status: 422 as
    written, 409 when its key was used with another item (``feedbackId`` names that one)."""

    status: int = Field(ge=400, le=499)
    error: str
    message: str
    field: str | None
    problems: list[ItemProblem]
    feedback_id: str | None = Field(
        alias="feedbackId",
        description="On a 409, the feedback the key was used for; else null.",
        json_schema_extra={"format": "uuid"},
    )


class FeedbackBatchWritten(Answer):
    """Each item's result, in the order sent; ``position`` reflects every item recorded."""

    model_config = shown_as(feedback_examples.FEEDBACK_BATCH_WRITTEN)

    items: list[FeedbackItemWritten | FeedbackItemRefused]
    position: Position | None = Field(description="null when no item was recorded")


class ReportWritten(Answer):
    model_config = shown_as(report_examples.IDEA_DRAFTED, report_examples.REPORT_TRIAGED)

    report_id: str = Field(alias="reportId", json_schema_extra={"format": "uuid"})
    status: str = Field(description="Draft, HandedOver, New, Triaged, Resolved or WontFix.")
    category: Category
    position: Position


class WrongAnswerDrafted(ReportWritten):
    model_config = shown_as(report_examples.WRONG_ANSWER_DRAFTED)

    kind: Kind | None = Field(description="What the evidence check and the account decided.")
    extra_context: str | None = Field(alias="extraContext", description="The labelled block.")


class ReportSubmitted(ReportWritten):
    model_config = shown_as(report_examples.REPORT_SUBMITTED)

    handed_over: bool = Field(alias="handedOver")


class SidePanelView(Answer):
    thread: str | None
    message: str | None


class ParsedBlock(Answer):
    kind: str | None
    agent: str | None
    model: str | None
    addressee: str | None


class HandOverState(Answer):
    handed_over: bool | None = Field(alias="handedOver")
    attempts: int | None
    failed: bool | None
    last_error: str | None = Field(alias="lastError")


class ReviewState(Answer):
    reviewed_by: str | None = Field(alias="reviewedBy")
    reviewed_at: Timestamp | None = Field(alias="reviewedAt")
    change: str | None
    link: str | None
    reason: str | None


class ReportStep(Answer):
    """One thing that happened to a report: who (none for the service's own delivery), what,
    when, and the words that went with it (what changed, the reason, the delivery error)."""

    at: Timestamp
    actor: str | None
    step: str
    detail: str | None


class ReportView(Answer):
    model_config = shown_as(report_examples.INBOX_ITEM)

    report_id: str = Field(alias="reportId")
    tenant_id: str = Field(alias="tenantId")
    reporter: str
    category: str
    status: str
    message: str
    side_panel: SidePanelView = Field(alias="sidePanel")
    extra_context: str | None = Field(alias="extraContext")
    parsed: ParsedBlock
    hand_over: HandOverState = Field(alias="handOver")
    drafted_at: Timestamp | None = Field(alias="draftedAt")
    submitted_at: Timestamp | None = Field(alias="submittedAt")
    review: ReviewState
    trace_id: str | None = Field(
        alias="traceId", description="W3C trace id of the reported answer."
    )
    span_id: str | None = Field(alias="spanId", description="W3C span id of the answer.")
    gen_ai: dict[str, str] | None = Field(
        alias="genAi", description="The OpenTelemetry GenAI attributes sent with it."
    )
    position: Order


class KindCorrection(Answer):
    """The Kind and Addressee a Reviewer corrected (decisions D170, D171); ``parsed`` keeps
    the reporter's."""

    kind: str
    addressee: str
    corrected_by: str = Field(alias="correctedBy")
    corrected_at: Timestamp = Field(alias="correctedAt")


class ReviewerNote(Answer):
    at: Timestamp
    noted_by: str = Field(alias="notedBy")
    words: str


class Annotations(Answer):
    """A reviewer's annotations (decisions D170–D174). ``notes`` is null to a reader who may
    not read them: anyone but a Reviewer, and the report's own reporter (D173)."""

    correction: KindCorrection | None
    tags: list[str]
    notes: list[ReviewerNote] | None


class ReportDetail(ReportView):
    """One report, with every step of its lifecycle, oldest first, and its annotations."""

    model_config = shown_as(report_examples.REPORT_VIEW)

    lifecycle: list[ReportStep]
    annotations: Annotations


class InboxPage(Answer):
    model_config = shown_as(report_examples.INBOX_PAGE)

    items: list[ReportView]
    next: Cursor


class MyReportsPage(Answer):
    """The caller's own reports with their outcome (``GET /factory/reports/mine``)."""

    model_config = shown_as(report_examples.INBOX_PAGE)

    items: list[ReportView]
    next: Cursor


ReviewStatusAnswer = ReviewStatus


class ArtifactStored(Answer):
    model_config = shown_as(feedback_examples.ARTIFACT_STORED)

    ref: str
    bytes: int


class PersonErasure(Answer):
    """A person erased (decisions D43): how many data keys were destroyed, how many of the
    log's events were theirs, how many of their artifacts were deleted."""

    model_config = shown_as(privacy_examples.PERSON_ERASURE)

    erasure_id: str = Field(alias="erasureId")
    keys_destroyed: int = Field(alias="keysDestroyed")
    events: int
    artifacts_deleted: int = Field(alias="artifactsDeleted")
    position: str


class PersonExport(Answer):
    """Everything held about a person (decisions D46): their events, decoded, in log order,
    and the artifacts they reference."""

    model_config = shown_as(privacy_examples.PERSON_EXPORT)

    tenant_id: str = Field(alias="tenantId")
    person: str
    exported_at: str = Field(alias="exportedAt")
    events: list[dict[str, Any]]
    artifacts: list[dict[str, Any]]


EVENT_APPLIED: JsonDict = {
    "type": "factory.runs.v1.RunCompleted",
    "applied": True,
    "position": feedback_examples.FEEDBACK_WRITTEN["position"],
}


class EventApplied(Answer):
    """``POST /factory/events``: the event's type and whether this request applied it."""

    model_config = shown_as(EVENT_APPLIED)

    type: str
    applied: bool = Field(
        description="False when its source + id was applied before in this tenant."
    )
    position: Position
