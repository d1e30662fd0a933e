"""Command handlers of the feedback context: load, decide, hand back for the bus to append."""

import hashlib
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from functools import cache
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError

from contracts.artifact_refs import normal_refs
from contracts.feedback import RecordFeedback, artifact_refs
from services.bus.decisions import Decision
from services.bus.issued import Issued
from services.feedback.domain import Feedback, feedback_id_for
from services.observing.metrics import FEEDBACK_RECORDED, tenant_label
from services.permissions.rules import giver_role
from services.store.event_store import EventStore


def request_digest(command: RecordFeedback) -> str:
    """What makes two requests 'the same' for the idempotency key."""
    canonical = command.model_dump_json(by_alias=True, exclude_none=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def with_normal_refs(command: RecordFeedback) -> RecordFeedback:
    """The command with its artifact references in their one spelling: that is
    what is stored, and what makes a repeated request the same one."""
    if command.comment_ref is None and command.corrected_artifact_ref is None:
        return command  # nothing to spell: most feedback (a rating) references nothing
    refs = normal_refs(artifact_refs(command))
    return command.model_copy(
        update={
            "comment_ref": refs["commentRef"],
            "corrected_artifact_ref": refs["correctedArtifactRef"],
        }
    )


def created_by(issued: Issued) -> UUID:
    """The feedback a command creates. A key is the sender's own: the same key from another
    person is another command."""
    return feedback_id_for(issued.tenant_id, f"{issued.actor}/{issued.command_id}")


def record_feedback(store: EventStore, issued: Issued) -> Decision:
    """SPEC C11: the same key with the same body answers the same feedback and appends nothing."""
    assert isinstance(issued.command, RecordFeedback)
    command = with_normal_refs(issued.command)
    feedback_id = created_by(issued)
    digest = request_digest(command)
    if not issued.new:  # the bus did not find it absent already: look
        with suppress(AggregateNotFoundError):
            existing: Feedback = store.repository.get(feedback_id)
            existing.same_request(issued.tenant_id, digest)
            return Decision([], Recorded(feedback_id, False))
    # A new feedback's one event, without its aggregate: nothing here reads the aggregate.
    recorded = Feedback.recorded(
        command,
        feedback_id=feedback_id,
        tenant_id=issued.tenant_id,
        given_by=issued.actor,
        given_at=issued.at,
        command_id=issued.command_id,
        request_digest=digest,
        given_as=giver_role(issued.roles),
    )
    return Decision(
        [],
        Recorded(feedback_id, True),
        committed=recorded_counter(tenant_label(issued.tenant_id), command.kind.value),
        created=[recorded],
    )


@cache
def recorded_counter(tenant: str, kind: str) -> Callable[[], None]:
    """The counter of one tenant label and kind (SPEC C48), looked up once: ``labels()``
    is a lookup under a lock, paid per command otherwise. As many as the label's values."""
    return FEEDBACK_RECORDED.labels(tenant, kind).inc


@dataclass(frozen=True)
class Recorded:
    feedback_id: UUID
    created: bool  # False when the command repeated one already accepted
