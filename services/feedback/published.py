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


PUBLICATIONS: dict[type, Publication] = {
    Feedback.Recorded: Publication(
        topic=topics.FEEDBACK_RECORDED,
        type="evaluation.feedback.v1.FeedbackRecorded",
        to_contract=feedback_recorded,
    ),
}
