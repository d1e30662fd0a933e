"""The CloudEvents mapping of what we publish, without a broker (reading: test_inbound_parsing)."""

import json
from datetime import UTC, datetime
from typing import Any
from uuid import uuid4

from contracts.feedback import RecordFeedback
from services.feedback.domain import Feedback
from services.feedback.handlers import request_digest
from services.feedback.published import RECORDED
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
