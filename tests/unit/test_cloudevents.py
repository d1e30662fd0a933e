"""The CloudEvents mapping, both ways, without a broker."""

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from uuid import uuid4

import pytest

from contracts.feedback import RecordFeedback
from services.errors import Refused
from services.feedback.domain import Feedback
from services.feedback.handlers import request_digest
from services.feedback.published import RECORDED
from services.inbound import RECORD_FEEDBACK_TYPE, parse_command
from services.publication import to_message

AT = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def recorded_event() -> Any:
    cmd = RecordFeedback.model_validate(
        {"projectId": "p", "subjectKind": "run", "subjectRef": "r1", "kind": "rating", "rating": 2}
    )
    feedback = Feedback.record(
        cmd,
        feedback_id=uuid4(),
        tenant_id="t1",
        given_by="alice",
        given_at=AT,
        command_id="c",
        request_digest=request_digest(cmd),
    )
    return feedback.collect_events()[0]


def test_feedback_recorded_is_a_structured_cloudevent_keyed_by_the_feedback_id() -> None:
    event = recorded_event()
    message = to_message(RECORDED, event, "urn:test")
    envelope = json.loads(message.value)
    assert message.headers["content-type"] == b"application/cloudevents+json"
    assert message.key == str(event.originator_id)
    assert envelope["specversion"] == "1.0"
    assert envelope["type"] == "evaluation.feedback.v1.FeedbackRecorded"
    assert envelope["source"] == "urn:test"
    assert envelope["subject"] == str(event.originator_id)
    assert envelope["datacontenttype"] == "application/json"
    assert envelope["time"].startswith("2026-11-29T12:00:00")
    # SPEC C09: exactly seed 004's payload
    assert envelope["data"] == {
        "feedbackId": str(event.originator_id),
        "tenantId": "t1",
        "subjectKind": "run",
        "subjectRef": "r1",
        "kind": "rating",
        "rating": 2,
    }


def test_the_cloudevent_id_is_the_same_each_time_the_event_is_published() -> None:
    event = recorded_event()
    publication = RECORDED
    first = json.loads(to_message(publication, event, "urn:a").value)["id"]
    again = json.loads(to_message(publication, event, "urn:a").value)["id"]
    other = json.loads(to_message(publication, recorded_event(), "urn:a").value)["id"]
    assert first == again != other


@dataclass
class Record:
    """A consumer record as aiokafka hands it over (our own stand-in, for pure parsing)."""

    value: bytes
    topic: str = "evaluation.feedback.v1.record-feedback"
    partition: int = 2
    offset: int = 17
    key: bytes | None = None
    headers: list[tuple[str, bytes]] = field(default_factory=list)


def envelope(**overrides: Any) -> bytes:
    body = {
        "specversion": "1.0",
        "id": "m-1",
        "source": "urn:neighbour",
        "type": RECORD_FEEDBACK_TYPE,
        "tenantid": "t1",
        "actor": "svc-neighbour",
        "datacontenttype": "application/json",
        "data": {"projectId": "p", "subjectKind": "run", "subjectRef": "r", "kind": "escalation"},
        **overrides,
    }
    return json.dumps({k: v for k, v in body.items() if v is not None}).encode()


def parse(value: bytes) -> Any:
    return parse_command(Record(value), RECORD_FEEDBACK_TYPE, RecordFeedback, lambda: AT)


def test_a_record_feedback_cloudevent_becomes_a_tracked_command() -> None:
    issued = parse(envelope())
    assert (issued.tenant_id, issued.actor, issued.at) == ("t1", "svc-neighbour", AT)
    assert issued.command_id == "ce/urn:neighbour/m-1"
    assert issued.tracking is not None
    assert issued.tracking.application_name == "evaluation.feedback.v1.record-feedback:2"
    assert issued.tracking.notification_id == 17


@pytest.mark.parametrize(
    ("value", "field"),
    [
        (b"\x00 not json", "value"),
        (envelope(type="something.else"), "type"),
        (envelope(tenantid=None), "tenantid"),
        (envelope(actor=None), "actor"),
        (
            envelope(
                data={
                    "projectId": "p",
                    "subjectKind": "run",
                    "subjectRef": "r",
                    "kind": "escalation",
                    "givenBy": "mallory",
                }
            ),
            "givenBy",
        ),
        (
            envelope(data={"projectId": "p", "subjectKind": "run", "kind": "escalation"}),
            "subjectRef",
        ),
    ],
)
def test_a_message_that_cannot_be_applied_is_refused_naming_why(value: bytes, field: str) -> None:
    with pytest.raises(Refused) as refused:
        parse(value)
    assert refused.value.field == field
