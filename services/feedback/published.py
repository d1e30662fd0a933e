"""Which feedback events leave the service, on which topic, in which contract."""

from typing import Any

from contracts import topics
from contracts.feedback import FeedbackKind, FeedbackRecorded, SubjectKind
from services.feedback.domain import Feedback
from services.publication import Publication


def feedback_recorded(event: Any) -> FeedbackRecorded:
    return FeedbackRecorded(
        feedback_id=event.originator_id,
        tenant_id=event.tenant_id,
        subject_kind=SubjectKind(event.subject_kind),
        subject_ref=event.subject_ref,
        kind=FeedbackKind(event.kind),
        rating=event.rating,
    )


RECORDED = Publication(
    event=Feedback.Recorded,
    topic=topics.FEEDBACK_RECORDED,
    payload=FeedbackRecorded,
    to_contract=feedback_recorded,
    key="feedbackId",
    title="FeedbackRecorded",
    description="Feedback exists on a subject (SPEC C10); de-duplicate on the CloudEvent id.",
)

PUBLICATIONS: tuple[Publication, ...] = (RECORDED,)
