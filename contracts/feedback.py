"""Feedback on an agent's work: the RecordFeedback command and the FeedbackRecorded event.

SPEC C01–C12. The server stamps ``tenantId`` (from the API key or the Kafka message's
``tenantid`` attribute) and ``givenBy`` (the key's subject or the ``actor`` attribute): a
body that brings either is refused, naming the field.
"""

from enum import StrEnum
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, field_validator

from contracts.goals import MAX_SERVES, GoalRefText
from contracts.scalars import Ref, no_nul
from contracts.trace_links import GenAiField, SpanIdField, TraceIdField


class SubjectKind(StrEnum):
    """What feedback can be given on (SPEC C03)."""

    run = "run"
    attempt = "attempt"
    artifact = "artifact"
    memory = "memory"
    evaluation = "evaluation"


class FeedbackKind(StrEnum):
    """SPEC C04: ratings, corrections (with the corrected artifact), comments, escalations."""

    rating = "rating"
    correction = "correction"
    comment = "comment"
    escalation = "escalation"


RATING_MIN, RATING_MAX = 1, 5  # our decision: the seed gives only "int"


class Contract(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    @field_validator("*", mode="before")
    @classmethod
    def no_nul(cls, value: Any) -> Any:
        """PostgreSQL text cannot hold NUL: refuse it in every text field of every contract,
        typed as a scalar (``contracts.scalars``) or not."""
        if isinstance(value, str):
            no_nul(value)
        if isinstance(value, list):
            for item in value:
                if isinstance(item, str):
                    no_nul(item)
        return value


class RecordFeedback(Contract):
    """Record one piece of feedback on a subject; the subject itself is never altered (C07).

    The text of a comment and a corrected artifact are referenced, never inline (C06).
    """

    project_id: Ref = Field(alias="projectId")
    subject_kind: SubjectKind = Field(alias="subjectKind")
    subject_ref: Ref = Field(alias="subjectRef", description="The subject's id (C08).")
    kind: FeedbackKind
    rating: int | None = Field(default=None, ge=RATING_MIN, le=RATING_MAX)
    comment_ref: Ref | None = Field(
        default=None, alias="commentRef", description="Artifact reference of the text."
    )
    corrected_artifact_ref: Ref | None = Field(default=None, alias="correctedArtifactRef")
    serves: list[GoalRefText] | None = Field(
        default=None,
        max_length=MAX_SERVES,
        description="Goal references `kind:id` (charter, task, project, setpoint) this served "
        "(SPEC M01–M05): a malformed one is refused, naming it.",
    )
    trace_id: TraceIdField = None
    span_id: SpanIdField = None
    gen_ai: GenAiField = None


GiverRole = Literal["requester", "reviewer", "operator"]


class FeedbackRecorded(Contract):
    """Published on ``evaluation.feedback.v1.feedback-recorded``: feedback exists on a subject."""

    feedback_id: UUID = Field(alias="feedbackId")
    tenant_id: str = Field(alias="tenantId")
    subject_kind: SubjectKind = Field(alias="subjectKind")
    subject_ref: str = Field(alias="subjectRef")
    kind: FeedbackKind
    rating: int | None = None
    giver_role: GiverRole | None = Field(
        default=None,
        alias="giverRole",
        description="The giver's role (SPEC C05); absent on feedback recorded before roles.",
    )


def artifact_refs(command: RecordFeedback) -> dict[str, str | None]:
    """The artifacts a command references, by field (checked to exist at every entry point)."""
    return {
        "commentRef": command.comment_ref,
        "correctedArtifactRef": command.corrected_artifact_ref,
    }


# Fields the server stamps; a client that sends one is refused with the field named.
STAMPED_FIELDS = frozenset({"tenantId", "givenBy", "givenAt", "feedbackId"})


# ``POST /factory/feedback:batch``: at most this many items in one request, decided
# together and appended in one transaction.
MAX_BATCH_ITEMS = 1000


class RecordFeedbackItem(RecordFeedback):
    """One item of a batch: a RecordFeedback and, optionally, the item's own idempotency key.

    A key is the item's command id, as an ``Idempotency-Key`` header is a single POST's: the
    same key and item answer the same ``feedbackId`` (200) and append nothing, another item
    under it is a 409 — also across the two routes. Without one, an item's key derives from
    the request's ``Idempotency-Key`` and the item's place (``<key>/<index>``), so a whole
    batch sent again repeats item by item; with neither, the item is new every time."""

    idempotency_key: str | None = Field(
        default=None, alias="idempotencyKey", min_length=1, max_length=200
    )


class RecordFeedbackBatch(Contract):
    """Up to ``MAX_BATCH_ITEMS`` RecordFeedback commands; each item succeeds or fails alone."""

    items: list[RecordFeedbackItem] = Field(min_length=1, max_length=MAX_BATCH_ITEMS)
