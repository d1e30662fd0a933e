"""The CloudEvents mapping of what we publish, without a broker (reading: test_inbound_parsing)."""

import json
import uuid
from typing import Any
from uuid import uuid4

from cloudevents.core.bindings.kafka import (
    KafkaMessage,
    from_structured_event,
    to_structured_event,
)
from cloudevents.core.v1.event import CloudEvent
from hypothesis import given, settings
from hypothesis import strategies as st

from contracts.feedback import RecordFeedback
from contracts.scalars import is_blank
from services.feedback.published import RECORDED
from services.kafka.publication import (
    EVENT_ID_NAMESPACE,
    cloudevent_attributes,
    cloudevent_id,
    to_message,
)
from services.observing.tracing import stamp
from tests.unit.test_feedback_rules import record


def recorded_event() -> Any:
    cmd = RecordFeedback.model_validate(
        {"projectId": "p", "subjectKind": "run", "subjectRef": "r1", "kind": "rating", "rating": 2}
    )
    return record(cmd).collect_events()[0]


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
        "giverRole": None,  # recorded by the service itself: no role (SPEC C05)
    }


def test_the_cloudevent_id_is_the_same_each_time_the_event_is_published() -> None:
    event = recorded_event()
    publication = RECORDED
    first = json.loads(to_message(publication, event, "urn:a").value)["id"]
    again = json.loads(to_message(publication, event, "urn:a").value)["id"]
    other = json.loads(to_message(publication, recorded_event(), "urn:a").value)["id"]
    assert first == again != other


def test_the_cloudevent_id_is_the_uuid5_of_the_event_s_place_in_its_aggregate() -> None:
    """Written out with hashlib for speed, it must be the very id ``uuid5`` derives
    (consumers de-duplicate on it)."""
    for version in (1, 2, 9, 10, 12345, 2**40):
        aggregate = uuid.uuid4()
        expected = str(uuid.uuid5(EVENT_ID_NAMESPACE, f"{aggregate}/{version}"))
        assert cloudevent_id(aggregate, version) == expected
        assert cloudevent_id(str(aggregate), version) == expected
    # one pinned, so a change of namespace or name cannot pass unnoticed
    assert (
        cloudevent_id(uuid.UUID("00000000-0000-0000-0000-000000000001"), 1)
        == "84cbd09d-0419-565e-99dd-9d69bffe27ef"
    )


@settings(max_examples=300, deadline=None)
@given(aggregate=st.uuids() | st.text(max_size=40), version=st.integers(0, 2**63 - 1))
def test_any_cloudevent_id_is_the_uuid5_of_its_name(
    aggregate: uuid.UUID | str, version: int
) -> None:
    """The version and variant digits are set in the text: every digest's, not a few."""
    expected = str(uuid.uuid5(EVENT_ID_NAMESPACE, f"{aggregate}/{version}"))
    assert cloudevent_id(aggregate, version) == expected


def sdk_message(publication: Any, event: Any, source: str) -> KafkaMessage:
    """What the CloudEvents SDK writes for the event's attributes and payload (the plain way
    of building a message): the reference the relay's own writing is held to."""
    attributes = cloudevent_attributes(publication, event, source, str(event.originator_id))
    data = publication.to_contract(event).model_dump(mode="json", by_alias=True)
    return to_structured_event(CloudEvent(attributes, data))


def assert_same_as_the_sdk_writes(event: Any, source: str = "urn:test") -> None:
    ours, sdk = to_message(RECORDED, event, source), sdk_message(RECORDED, event, source)
    assert (ours.key, ours.headers) == (sdk.key, sdk.headers)
    assert json.loads(ours.value) == json.loads(sdk.value)
    assert list(json.loads(ours.value)) == list(json.loads(sdk.value))  # and in its order
    read, expected = from_structured_event(ours), from_structured_event(sdk)
    assert read.get_attributes() == expected.get_attributes()
    assert read.get_data() == expected.get_data()


def test_the_relay_writes_the_cloudevent_the_sdk_writes() -> None:
    """The relay writes the JSON itself (orjson), the same attributes and values."""
    assert_same_as_the_sdk_writes(recorded_event())


def test_a_traced_event_carries_its_traceparent_as_the_sdk_writes_it() -> None:
    event = recorded_event()
    stamp(event, f"00-{uuid4().hex}-{uuid4().hex[:16]}-01")
    assert_same_as_the_sdk_writes(event)
    assert json.loads(to_message(RECORDED, event, "urn:a").value)["traceparent"] == (
        event.traceparent
    )


@settings(max_examples=60, deadline=None)
@given(
    # a blank reference (whitespace and zero-width characters alone) is refused by the
    # command (contracts.scalars.Ref), never published
    ref=st.text(st.characters(exclude_categories=("Cs", "Cc")), min_size=1, max_size=40).filter(
        lambda text: not is_blank(text)
    ),
    source=st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=20),
    rating=st.integers(1, 5),
)
def test_any_text_travels_as_the_same_json_value(ref: str, source: str, rating: int) -> None:
    """Non-ASCII travels as UTF-8 rather than the SDK's ``\\u`` escapes: the same values."""
    cmd = RecordFeedback.model_validate(
        {"projectId": "p", "subjectKind": "run", "subjectRef": ref, "kind": "rating"}
        | {"rating": rating}
    )
    event = record(cmd, tenant_id=ref).collect_events()[0]
    assert_same_as_the_sdk_writes(event, source)
