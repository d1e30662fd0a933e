"""Reading a Kafka record into a command, without a broker: bounds on every
attribute and field, strict for our commands, tolerant for other services' events."""

import gzip
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import pytest

from contracts import topics
from contracts.envelope import MAX_ATTRIBUTE_LENGTH, MAX_MESSAGE_BYTES, CommandEnvelope
from contracts.errors import Refused
from contracts.feedback import Contract
from services.kafka.inbound.dead_letters import dead_letter_headers
from services.kafka.inbound.fast_cloudevent_reading import plain_event
from services.kafka.inbound.parsing import parse
from services.kafka.inbound.subscription import Subscription
from services.processes.contexts import SUBSCRIPTIONS

AT = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
RECORD_FEEDBACK = "evaluation.feedback.v1.RecordFeedback"
DATA = {"projectId": "p", "subjectKind": "run", "subjectRef": "r", "kind": "escalation"}


@dataclass
class Record:
    """A consumer record as aiokafka hands it over (our own stand-in, for pure parsing)."""

    value: bytes | None
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
        "type": RECORD_FEEDBACK,
        "tenantid": "t1",
        "actor": "svc-neighbour",
        "datacontenttype": "application/json",
        "data": DATA,
        **overrides,
    }
    return json.dumps({k: v for k, v in body.items() if v is not None}).encode()


def parse_with(value: bytes | None, *subscriptions: Subscription, key: bytes | None = None) -> Any:
    by_type = {s.cloudevent_type: s for s in subscriptions or SUBSCRIPTIONS}
    return parse(Record(value, key=key), by_type, lambda: AT)


def test_a_record_feedback_cloudevent_becomes_a_command_with_its_identity() -> None:
    subscription, issued = parse_with(envelope())
    assert subscription.cloudevent_type == RECORD_FEEDBACK
    assert (issued.tenant_id, issued.actor, issued.at) == ("t1", "svc-neighbour", AT)
    assert issued.command_id == "ce/urn:neighbour/m-1"
    # Identity is the tenant's source + id, never the offset; unambiguous when the source
    # holds a slash.
    assert issued.identity == json.dumps(["t1", "urn:neighbour", "m-1"])
    assert issued.tracking is None
    _, other = parse_with(envelope(source="urn:neighbour/m", id="1"))
    assert other.identity != parse_with(envelope(source="urn:neighbour", id="m/1"))[1].identity


def test_another_tenants_event_under_the_same_source_and_id_is_another_event() -> None:
    """Found by attacking the service: the identity was source + id alone, so one tenant's
    event kept another's under the same two from being applied."""
    _, mine = parse_with(envelope(tenantid="t1"))
    _, theirs = parse_with(envelope(tenantid="t2"))
    assert mine.identity != theirs.identity
    assert mine.identity == parse_with(envelope(tenantid="t1"))[1].identity


def test_extension_attributes_are_accepted_as_cloudevents_allows() -> None:
    _, issued = parse_with(envelope(traceparent="00-" + "a" * 32 + "-" + "b" * 16 + "-01"))
    assert issued.tenant_id == "t1"


LONG = "x" * (MAX_ATTRIBUTE_LENGTH + 1)


@pytest.mark.parametrize(
    ("value", "field"),
    [
        (b"\x00 not json", "value"),
        (b"[1, 2]", "value"),
        (envelope(type="something.else"), "type"),
        (envelope(tenantid=None), "tenantid"),
        (envelope(tenantid="   "), "tenantid"),
        (envelope(actor=None), "actor"),
        (envelope(data={**DATA, "givenBy": "mallory"}), "givenBy"),
        (envelope(data={k: v for k, v in DATA.items() if k != "subjectRef"}), "subjectRef"),
        (envelope(data=[1]), "body"),
        # Every attribute is bounded before anything is stored.
        (envelope(tenantid=LONG), "tenantid"),
        (envelope(actor=LONG), "actor"),
        (envelope(source=LONG), "source"),
        (envelope(id=LONG), "id"),
        (envelope(subject=LONG), "subject"),
        (envelope(type=LONG), "type"),
        (envelope(data={**DATA, "subjectRef": "r" * 513}), "subjectRef"),
        # Our own commands are read strictly: no coercion, no unknown field.
        (envelope(data={**DATA, "kind": "rating", "rating": "5"}), "rating"),
        (envelope(data={**DATA, "kind": "rating", "rating": 5.0}), "rating"),
        (envelope(data={**DATA, "surprise": 1}), "surprise"),
    ],
)
def test_a_message_that_cannot_be_applied_is_refused_naming_why(value: bytes, field: str) -> None:
    with pytest.raises(Refused) as refused:
        parse_with(value)
    assert refused.value.field == field


def test_a_600_kb_tenant_is_refused_before_the_value_is_even_parsed() -> None:
    """A 600 KB tenantid is refused at the door: accepted, it would stall the relay later."""
    value = envelope(tenantid="t" * 600_000)
    assert len(value) > MAX_MESSAGE_BYTES
    with pytest.raises(Refused) as refused:
        parse_with(value)
    assert refused.value.field == "value"
    assert "bytes" in refused.value.message


@pytest.mark.parametrize(
    "value",
    [
        b"[" * 100_000 + b"]" * 100_000,
        envelope(data={"projectId": "PLACE"}).replace(b'"PLACE"', b"[" * 50_000 + b"]" * 50_000),
    ],
    ids=["a bare array", "in data"],
)
def test_a_message_nested_past_every_parser_is_refused_not_raised(value: bytes) -> None:
    """Found by attacking the consumer: 100,000 brackets (under the size bound) made the
    standard parser raise RecursionError, which stopped the consumer instead of one message
    going to the dead-letter topic."""
    assert len(value) < MAX_MESSAGE_BYTES
    with pytest.raises(Refused) as refused:
        parse_with(value)
    assert refused.value.field == "value"
    assert "nests too deeply" in str(refused.value)


def test_a_message_without_a_value_or_with_a_huge_key_is_refused() -> None:
    with pytest.raises(Refused) as no_value:
        parse_with(None)
    assert no_value.value.field == "value"
    with pytest.raises(Refused) as big_key:
        parse_with(envelope(), key=b"k" * 2000)
    assert big_key.value.field == "key"


def test_a_gzip_compressed_2_mb_value_arrives_decompressed_and_is_refused_by_size() -> None:
    """The broker accepts it compressed; the consumer sees the 2 MB it expands to."""
    huge = envelope(data={**DATA, "subjectRef": "r" * 2_000_000})
    assert len(gzip.compress(huge)) < 100_000
    with pytest.raises(Refused) as refused:
        parse_with(huge)
    assert refused.value.field == "value"


class RunCompleted(Contract):
    run_id: str


class RunCompletedMessage(CommandEnvelope):
    type: Literal["neighbour.runs.v1.RunCompleted"]
    data: RunCompleted


TOLERANT = Subscription(
    topic="neighbour.runs.v1.run-completed",
    envelope=RunCompletedMessage,
    title="RunCompleted",
    description="Another service's event.",
    strict=False,
    scope="factory.evaluation.run",
)


def test_another_services_event_is_read_tolerantly_a_new_field_is_kept_and_ignored() -> None:
    value = envelope(type=TOLERANT.cloudevent_type, data={"run_id": "r-1", "addedLater": {"x": 1}})
    subscription, issued = parse_with(value, TOLERANT)
    assert subscription is TOLERANT
    assert isinstance(issued.command, RunCompleted)
    assert issued.command.run_id == "r-1"
    assert issued.command.model_extra == {"addedLater": {"x": 1}}


def test_a_tolerant_read_still_refuses_a_missing_field() -> None:
    with pytest.raises(Refused) as refused:
        parse_with(envelope(type=TOLERANT.cloudevent_type, data={"runId": "r-1"}), TOLERANT)
    assert refused.value.field == "run_id"


def test_a_subscription_derives_its_type_and_payload_from_its_envelope_once() -> None:
    [record_feedback] = [s for s in SUBSCRIPTIONS if s.topic == topics.RECORD_FEEDBACK]
    assert record_feedback.cloudevent_type == RECORD_FEEDBACK
    assert record_feedback.model.__name__ == "RecordFeedback"


def test_a_dead_letter_keeps_the_original_headers_and_says_why_and_where_from() -> None:
    record = Record(b"{not json", headers=[("content-type", b"application/cloudevents+json")])
    headers = dict(dead_letter_headers(record, Refused("bad: " + "y" * 5000, field="value")))
    assert headers["content-type"] == b"application/cloudevents+json"
    assert headers["dlt-error"] == b"refused"
    assert headers["dlt-field"] == b"value"
    assert len(headers["dlt-reason"]) <= 1000
    assert headers["dlt-original-topic"] == record.topic.encode()
    assert (headers["dlt-original-partition"], headers["dlt-original-offset"]) == (b"2", b"17")


def sdk_reading(value: bytes, key: bytes | None) -> tuple[dict[str, Any], Any]:
    """What the CloudEvents SDK reads from the message (its default ``time`` left out)."""
    from cloudevents.core.bindings.kafka import KafkaMessage, from_structured_event

    event = from_structured_event(KafkaMessage({}, key, value))
    values = event.get_attributes()
    values.pop("time")
    return values, event.get_data()


@pytest.mark.parametrize(
    ("value", "key"),
    [
        (envelope(), None),
        (envelope(), b"the-key"),
        (envelope(traceparent="00-" + "a" * 32 + "-" + "b" * 16 + "-01", subject="s"), None),
        (envelope(partitionkey="in-the-body"), b"from-the-key"),
        (envelope(data=[1]), None),
        (envelope(data={**DATA, "subjectRef": "é\u2028"}), "clé".encode()),
        (envelope(id="m\n"), None),
    ],
)
def test_a_plain_event_is_read_as_the_cloudevents_sdk_reads_it(
    value: bytes, key: bytes | None
) -> None:
    """The fast reading of the plain shape agrees with the SDK's on what it reads."""
    assert plain_event(value, key) == sdk_reading(value, key)


@pytest.mark.parametrize(
    "value",
    [
        b"\x00 not json",
        b"[1, 2]",
        envelope(time="2026-11-29T12:00:00Z"),  # the SDK parses times its own way
        envelope(data=None, data_base64="e30="),
        envelope(specversion="0.3"),
        envelope(specversion=1.0),
        envelope(id=""),
        envelope(source=7),
        envelope(subject=""),
        envelope(datacontenttype=""),
        envelope(**{"Upper": "x"}),
        envelope(**{"under_score": "x"}),
        envelope(**{"trailing\n": "x"}),
        json.dumps({"specversion": "1.0", "id": "1", "type": RECORD_FEEDBACK}).encode(),
        '{"x": "\udc00"}'.encode("utf-8", "surrogatepass"),
    ],
)
def test_anything_but_the_plain_shape_is_left_to_the_cloudevents_sdk(value: bytes) -> None:
    assert plain_event(value, None) is None


@pytest.mark.parametrize(
    ("value", "fields"),
    [
        # A time the SDK cannot read is named as every other attribute is (decisions D140).
        (envelope(time="2026-11-29T12:00:00"), {"time"}),  # no zone: the SDK refuses it
        (envelope(time="yesterday"), {"time"}),
        (envelope(time="0000-01-01T00:00:00Z"), {"time"}),
        (envelope(time="10000-01-01T00:00:00Z"), {"time"}),
        (envelope(specversion="0.3"), {"value", "specversion"}),
        (envelope(id=""), {"value", "specversion"}),
        (envelope(subject=""), {"value", "specversion"}),
        (envelope(**{"under_score": "x"}), {"value", "specversion"}),
    ],
)
def test_what_the_sdk_judges_is_still_refused_as_before(value: bytes, fields: set[str]) -> None:
    with pytest.raises(Refused) as refused:
        parse_with(value)
    assert refused.value.field in fields


def test_an_event_with_a_time_is_still_read_through_the_sdk() -> None:
    _, issued = parse_with(envelope(time="2026-11-29T12:00:00Z"), key=b"k")
    assert issued.identity == json.dumps(["t1", "urn:neighbour", "m-1"])


def test_a_key_longer_than_an_attribute_is_refused_as_the_partition_key() -> None:
    with pytest.raises(Refused) as refused:
        parse_with(envelope(), key=b"k" * (MAX_ATTRIBUTE_LENGTH + 1))
    assert refused.value.field == "partitionkey"


@pytest.mark.parametrize("number", [b"NaN", b"Infinity", b"1e400", b"99999999999999999999", b"3.0"])
def test_a_rating_json_cannot_hold_or_an_int_cannot_take_is_refused_naming_it(
    number: bytes,
) -> None:
    """The fast reading leaves NaN and infinities to the SDK and hands big ints to json;
    either way the rating is refused by name, as the SDK's reading refuses it."""
    value = envelope(data={**DATA, "kind": "rating", "rating": 3}).replace(b"3}", number + b"}")
    assert number in value
    with pytest.raises(Refused) as refused:
        parse_with(value)
    assert refused.value.field == "rating"
