"""The Feedback aggregate: one piece of human feedback on one subject (SPEC C01–C12).

Decisions are pure: the id, the time and the command id come in with the command.
"""

from datetime import datetime
from functools import lru_cache
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate
from eventsourcing.utils import get_topic

from contracts.errors import Conflict, Refused
from contracts.feedback import FeedbackKind, RecordFeedback
from contracts.trace_links import check_trace_links, trace_fields
from services.store.fast_frozen import frozen_from_fields
from services.store.fast_uuid5 import uuid5_in
from services.store.sealing import Personal

# Namespace of the deterministic ids: the same natural key always names the same feedback.
FEEDBACK_NAMESPACE = UUID("7b0c1e0e-2f7c-5b7e-9a51-3f1f0c2d9a11")


feedback_uuid5 = uuid5_in(FEEDBACK_NAMESPACE)


@lru_cache(maxsize=8192)
def feedback_id_for(tenant_id: str, command_key: str) -> UUID:
    """The id of the feedback a command creates, derived from its idempotency or message key:
    ``uuid5(FEEDBACK_NAMESPACE, f"{tenant_id}/{command_key}")`` (``services.store.fast_uuid5``).
    Cached: the bus asks whether it exists (``Creates``), then the handler creates it."""
    return feedback_uuid5(f"{tenant_id}/{command_key}")


class Feedback(Aggregate):
    class Recorded(Aggregate.Created):
        # Who gave it decides nothing here: sealed under their key (decisions D42); so is a
        # subject ref that holds their id (a thread's ref, ``<giver>/_Thread/…``), while a
        # run's id stays plain for counts and joins (decisions D137).
        personal = Personal(identity=("given_by",), person="given_by", naming=("subject_ref",))

        tenant_id: str
        project_id: str
        subject_kind: str
        subject_ref: str
        kind: str
        rating: int | None
        comment_ref: str | None
        corrected_artifact_ref: str | None
        given_by: str
        command_id: str
        request_digest: str
        serves: list[str] | None = None  # goal refs; events older than goals have none
        # SPEC C05: the giver's role (requester, reviewer or operator); events older than
        # roles, and the service's own, have none.
        given_as: str | None = None
        # The trace of the answer it is about (D261); events older than trace links have none.
        trace_id: str | None = None
        span_id: str | None = None
        gen_ai: dict[str, str] | None = None

    def __init__(
        self,
        tenant_id: str,
        project_id: str,
        subject_kind: str,
        subject_ref: str,
        kind: str,
        rating: int | None,
        comment_ref: str | None,
        corrected_artifact_ref: str | None,
        given_by: str,
        command_id: str,
        request_digest: str,
        serves: list[str] | None = None,
        given_as: str | None = None,
        trace_id: str | None = None,
        span_id: str | None = None,
        gen_ai: dict[str, str] | None = None,
    ) -> None:
        self.tenant_id = tenant_id
        self.project_id = project_id
        self.subject_kind = subject_kind
        self.subject_ref = subject_ref
        self.kind = kind
        self.rating = rating
        self.comment_ref = comment_ref
        self.corrected_artifact_ref = corrected_artifact_ref
        self.given_by = given_by
        self.command_id = command_id
        self.request_digest = request_digest
        self.serves = serves
        self.given_as = given_as
        self.trace_id = trace_id
        self.span_id = span_id
        self.gen_ai = gen_ai

    @classmethod
    def record(
        cls,
        command: RecordFeedback,
        *,
        feedback_id: UUID,
        tenant_id: str,
        given_by: str,
        given_at: datetime,
        command_id: str,
        request_digest: str,
        given_as: str | None = None,
    ) -> "Feedback":
        fields = recorded_fields(command, tenant_id, given_by, command_id, request_digest, given_as)
        return cls._create(cls.Recorded, id=feedback_id, timestamp=given_at, **fields)

    @classmethod
    def recorded(
        cls,
        command: RecordFeedback,
        *,
        feedback_id: UUID,
        tenant_id: str,
        given_by: str,
        given_at: datetime,
        command_id: str,
        request_digest: str,
        given_as: str | None = None,
    ) -> "Feedback.Recorded":
        """The one event ``record`` creates, without building the aggregate: the bus only
        appends it, so the library's ``_create`` and ``mutate`` (most of the cost of deciding a
        RecordFeedback) stay off the path of Kafka ingest. ``_create`` builds this very event from
        these very values (the id, the first version, the time, the aggregate's topic and the
        same fields); a test compares what both store, byte for byte."""
        fields = recorded_fields(command, tenant_id, given_by, command_id, request_digest, given_as)
        # The same fields in the same order, a UUID id, without the frozen dataclass's
        # ``__init__`` (``services.store.fast_frozen``).
        return frozen_from_fields(
            cls.Recorded,
            {
                "originator_id": feedback_id,
                "originator_version": cls.INITIAL_VERSION,
                "timestamp": given_at,
                "originator_topic": FEEDBACK_TOPIC,
                **fields,
            },
        )

    def same_request(self, tenant_id: str, request_digest: str) -> None:
        """A repeated command must be the same request; anything else is a conflict."""
        if self.tenant_id != tenant_id or self.request_digest != request_digest:
            raise Conflict(
                "this idempotency key was already used with a different request",
                feedbackId=str(self.id),
            )


FEEDBACK_TOPIC = get_topic(Feedback)


def recorded_fields(
    command: RecordFeedback,
    tenant_id: str,
    given_by: str,
    command_id: str,
    request_digest: str,
    given_as: str | None = None,
) -> dict[str, Any]:
    """What a Recorded event says beyond its id and time, once the command is checked: one
    place for both ways of creating it (``Feedback.record``, ``Feedback.recorded``)."""
    check_feedback(command)
    return {
        "tenant_id": tenant_id,
        "project_id": command.project_id,
        "subject_kind": command.subject_kind.value,
        "subject_ref": command.subject_ref,
        "kind": command.kind.value,
        "rating": command.rating,
        "comment_ref": command.comment_ref,
        "corrected_artifact_ref": command.corrected_artifact_ref,
        "given_by": given_by,
        "command_id": command_id,
        "request_digest": request_digest,
        "serves": list(command.serves) if command.serves else None,
        "given_as": given_as,
        **trace_fields(command.trace_id, command.span_id, command.gen_ai),
    }


def check_feedback(command: RecordFeedback) -> None:
    """What each kind of feedback must carry (C02, C04, C06)."""
    if command.kind is FeedbackKind.rating and command.rating is None:
        raise Refused("a rating needs a rating value", field="rating")
    if command.kind is not FeedbackKind.rating and command.rating is not None:
        raise Refused("only rating feedback carries a rating value", field="rating")
    if command.kind is FeedbackKind.correction and command.corrected_artifact_ref is None:
        raise Refused("a correction needs the corrected artifact", field="correctedArtifactRef")
    if command.kind is FeedbackKind.comment and command.comment_ref is None:
        raise Refused("a comment needs the artifact reference of its text", field="commentRef")
    check_trace_links(command.trace_id, command.span_id)
