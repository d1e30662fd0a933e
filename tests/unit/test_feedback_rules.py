"""Pure rules of recording feedback (SPEC C01–C12): given a command, then events or an error."""

from datetime import UTC, datetime
from uuid import uuid4

import pytest

from contracts.errors import Conflict, Refused
from contracts.feedback import STAMPED_FIELDS, RecordFeedback
from services.bus.command_bodies import command_from
from services.feedback.domain import Feedback, feedback_id_for
from services.feedback.handlers import request_digest

AT = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def command(**overrides: object) -> RecordFeedback:
    body = {
        "projectId": "p1",
        "subjectKind": "run",
        "subjectRef": "run-42",
        "kind": "rating",
        "rating": 4,
        **overrides,
    }
    return RecordFeedback.model_validate(body)


def record(cmd: RecordFeedback, tenant_id: str = "t1") -> Feedback:
    """``cmd`` recorded by alice of ``tenant_id`` at ``AT``."""
    return Feedback.record(
        cmd,
        feedback_id=uuid4(),
        tenant_id=tenant_id,
        given_by="alice",
        given_at=AT,
        command_id="c1",
        request_digest=request_digest(cmd),
    )


def test_recording_feedback_emits_one_recorded_event_with_the_stamped_identity() -> None:
    feedback = record(command())
    (event,) = feedback.collect_events()
    assert isinstance(event, Feedback.Recorded)
    assert (event.tenant_id, event.given_by, event.timestamp) == ("t1", "alice", AT)
    assert (event.subject_kind, event.subject_ref, event.kind, event.rating) == (
        "run",
        "run-42",
        "rating",
        4,
    )


def test_the_time_of_the_feedback_is_the_commands_not_the_clocks() -> None:
    assert record(command()).created_on == AT


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"kind": "rating", "rating": None}, "rating"),  # C02: a rating carries its value
        ({"kind": "comment", "rating": None}, "commentRef"),  # C06: text by reference
        ({"kind": "correction", "rating": None}, "correctedArtifactRef"),  # C04
        ({"kind": "escalation", "rating": 3}, "rating"),
    ],
)
def test_each_kind_must_carry_what_it_is_about(overrides: dict[str, object], field: str) -> None:
    with pytest.raises(Refused) as refused:
        record(command(**overrides))
    assert refused.value.field == field


@pytest.mark.parametrize("kind", ["comment", "correction", "escalation"])
def test_every_kind_of_seed_004_can_be_recorded(kind: str) -> None:
    cmd = command(
        kind=kind, rating=None, commentRef="artifact://c/1", correctedArtifactRef="artifact://a/2"
    )
    assert record(cmd).kind == kind


def test_the_same_key_names_the_same_feedback_and_another_tenant_another() -> None:
    assert feedback_id_for("t1", "key/abc") == feedback_id_for("t1", "key/abc")
    assert feedback_id_for("t1", "key/abc") != feedback_id_for("t2", "key/abc")


def test_a_repeated_key_with_another_body_is_a_conflict() -> None:
    feedback = record(command())
    feedback.same_request("t1", request_digest(command()))  # the same request: fine
    with pytest.raises(Conflict):
        feedback.same_request("t1", request_digest(command(rating=1)))


@pytest.mark.parametrize("field", sorted(STAMPED_FIELDS))
def test_a_body_that_brings_a_stamped_field_is_refused_naming_it(field: str) -> None:
    body = {"projectId": "p", "subjectKind": "run", "subjectRef": "r", "kind": "escalation"}
    with pytest.raises(Refused) as refused:
        command_from({**body, field: "x"}, RecordFeedback, STAMPED_FIELDS)
    assert refused.value.field == field


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"subjectKind": "run", "subjectRef": "r", "kind": "escalation"}, "projectId"),
        (
            {"projectId": "p", "subjectKind": "planet", "subjectRef": "r", "kind": "escalation"},
            "subjectKind",
        ),
        (
            {
                "projectId": "p",
                "subjectKind": "run",
                "subjectRef": "r",
                "kind": "rating",
                "rating": 9,
            },
            "rating",
        ),
        ({"projectId": "p", "subjectKind": "run", "subjectRef": "r", "kind": "x"}, "kind"),
        (
            {
                "projectId": "p",
                "subjectKind": "run",
                "subjectRef": "r",
                "kind": "escalation",
                "colour": 1,
            },
            "colour",
        ),
    ],
)
def test_an_invalid_body_is_refused_naming_the_field(body: dict[str, object], field: str) -> None:
    with pytest.raises(Refused) as refused:
        command_from(body, RecordFeedback, STAMPED_FIELDS)
    assert refused.value.field == field


def test_text_with_a_nul_character_is_refused_naming_the_field() -> None:
    """PostgreSQL text cannot hold NUL: it is refused at the door, not in a read model."""
    body = {"projectId": "p", "subjectKind": "run", "subjectRef": "r\x00", "kind": "escalation"}
    with pytest.raises(Refused) as refused:
        command_from(body, RecordFeedback, STAMPED_FIELDS)
    assert refused.value.field == "subjectRef"
