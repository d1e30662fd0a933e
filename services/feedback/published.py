"""Which feedback events leave the service, on which topic, in which contract."""

from typing import Any, get_args
from uuid import UUID

import orjson

from contracts import topics
from contracts.feedback import FeedbackKind, FeedbackRecorded, GiverRole, SubjectKind
from services.feedback.domain import Feedback
from services.kafka.fast_cloudevents import PayloadWriter
from services.kafka.publication import Publication


def feedback_recorded(event: Any) -> FeedbackRecorded:
    return FeedbackRecorded(
        feedback_id=event.originator_id,
        tenant_id=event.tenant_id,
        subject_kind=SubjectKind(event.subject_kind),
        subject_ref=event.subject_ref,
        kind=FeedbackKind(event.kind),
        rating=event.rating,
        giver_role=getattr(event, "given_as", None),  # events older than roles have none
    )


SUBJECT_KINDS = frozenset(kind.value for kind in SubjectKind)
FEEDBACK_KINDS = frozenset(kind.value for kind in FeedbackKind)
GIVER_ROLES = frozenset(get_args(GiverRole))
INT64 = range(-(2**63), 2**63)  # orjson writes these as pydantic does; past them it refuses


def feedback_recorded_json(event: Any) -> bytes | None:
    """``feedback_recorded(event).model_dump_json(by_alias=True)`` without the model, for an
    event whose values the contract would take exactly as they are: a ``UUID`` id, texts
    without NUL (``Contract.no_nul``), kinds among the enums' values, a 64-bit int or no
    rating. Anything else (None) goes the validated way, and is refused (parked) as before.
    A test holds the two to the same bytes on any values."""
    feedback_id, tenant, subject_kind = event.originator_id, event.tenant_id, event.subject_kind
    subject_ref, kind, rating = event.subject_ref, event.kind, event.rating
    given_as = getattr(event, "given_as", None)  # events older than roles have none
    if not (
        type(feedback_id) is UUID
        and type(tenant) is str
        and type(subject_ref) is str
        and type(subject_kind) is str
        and type(kind) is str
        and subject_kind in SUBJECT_KINDS
        and kind in FEEDBACK_KINDS
        and (rating is None or (type(rating) is int and rating in INT64))
        and "\x00" not in tenant
        and "\x00" not in subject_ref
        and (given_as is None or given_as in GIVER_ROLES)
    ):
        return None
    payload = {
        "feedbackId": feedback_id,  # orjson writes a UUID as str() does, without the call
        "tenantId": tenant,
        "subjectKind": subject_kind,
        "subjectRef": subject_ref,
        "kind": kind,
        "rating": rating,
        "giverRole": given_as,
    }
    try:
        return orjson.dumps(payload)
    except orjson.JSONEncodeError:  # a lone surrogate: pydantic says what is wrong
        return None


RECORDED = Publication(
    event=Feedback.Recorded,
    topic=topics.FEEDBACK_RECORDED,
    payload=FeedbackRecorded,
    to_contract=feedback_recorded,
    payload_writer=PayloadWriter(feedback_recorded, feedback_recorded_json),
    key="feedbackId",
    title="FeedbackRecorded",
    description="Feedback exists on a subject (SPEC C10); de-duplicate on the CloudEvent id.",
)

PUBLICATIONS: tuple[Publication, ...] = (RECORDED,)
