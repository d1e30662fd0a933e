"""The store writes an event's JSON byte for byte as the library's transcoder would:
orjson for plain values, the library's encoder for anything else."""

import uuid
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest
from eventsourcing.persistence import JSONTranscoder, TranscodingNotRegisteredError

from contracts.errors import Refused
from contracts.feedback import RecordFeedback
from services.bus.command_bus import Receipt
from services.bus.receipts import receipt_id
from services.feedback.domain import Feedback
from services.feedback.handlers import request_digest
from services.observing.tracing import stamp
from services.store.event_store import EventStore
from services.store.fast_event_json import FastJSONTranscoder, plain_json


def transcoders() -> tuple[JSONTranscoder, JSONTranscoder]:
    store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    library = JSONTranscoder()
    store.register_transcodings(library)
    assert isinstance(store.mapper.transcoder, FastJSONTranscoder)
    return store.mapper.transcoder, library


AT = datetime(2026, 11, 30, 12, 0, 0, 123456, tzinfo=UTC)

PLAIN: list[dict[str, Any]] = [
    {"timestamp": AT, "originator_topic": "services.feedback.domain:Feedback", "rating": 5},
    {"t": datetime(2026, 1, 1), "z": AT.astimezone(timezone(timedelta(hours=-3, minutes=-30)))},
    {"s": "".join(chr(i) for i in range(0x2100) if not 0xD800 <= i < 0xE000) + "\U0001f600"},
    {"n": None, "b": True, "f": False, "big": 2**63 - 1, "small": -(2**63), "e": [], "d": {}},
    {"serves": ["goal-1", "goal-2"], "nested": {"a": [{"b": [AT, None, "x"]}]}},
]
NOT_PLAIN: list[dict[str, Any]] = [
    {"id": uuid.uuid4()},
    {"huge": 2**63},
    {"score": 0.1},
    {"amount": Decimal("1.5")},
    {"pair": ("a", "b")},
    {"keys": {1: "one"}},
    {"subclass": type("Name", (str,), {})("x")},
]


@pytest.mark.parametrize("state", PLAIN + NOT_PLAIN)
def test_an_event_state_is_written_as_the_library_writes_it(state: dict[str, Any]) -> None:
    fast, library = transcoders()
    assert fast.encode(state) == library.encode(state)
    assert fast.decode(fast.encode(state)) == library.decode(library.encode(state))


@pytest.mark.parametrize("state", PLAIN)
def test_plain_values_take_the_fast_way(state: dict[str, Any]) -> None:
    assert plain_json(state)


@pytest.mark.parametrize("state", NOT_PLAIN)
def test_anything_else_is_left_to_the_library(state: dict[str, Any]) -> None:
    assert not plain_json(state)


def test_what_the_library_cannot_write_is_refused_as_it_refuses_it() -> None:
    fast, library = transcoders()
    for transcoder in (fast, library):
        with pytest.raises(TranscodingNotRegisteredError):
            transcoder.encode({"tags": {"a", "b"}})
        with pytest.raises(UnicodeEncodeError):
            transcoder.encode({"lone": "\ud800"})


@pytest.mark.parametrize("digest", [None, "d" * 64])
def test_a_receipt_event_built_alone_is_stored_as_the_aggregates_own(digest: str | None) -> None:
    """The bus appends ``Receipt.recorded`` without building the aggregate; stored,
    it is the very event ``Receipt.record`` creates, and it loads as that receipt."""
    store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    identity = '["urn:neighbour", "m-1"]'
    [created] = Receipt.record(identity, "RecordFeedback", AT, digest).collect_events()
    alone = Receipt.recorded(identity, "RecordFeedback", AT, digest)
    assert store.mapper.to_stored_event(alone) == store.mapper.to_stored_event(created)
    store.events.put([alone])
    receipt = store.repository.get(receipt_id(identity))
    assert (receipt.identity, receipt.command, receipt.digest) == (
        identity,
        "RecordFeedback",
        digest,
    )


FEEDBACK_BODIES: list[dict[str, Any]] = [
    {"kind": "rating", "rating": 4},
    {"kind": "comment", "commentRef": "artifact://c/1", "serves": ["task:t-1", "project:p"]},
    {
        "kind": "correction",
        "correctedArtifactRef": "artifact://a/2",
        "commentRef": "artifact://c/3",
    },
    {"kind": "escalation", "subjectRef": "ünïcode ☃ \U0001f600"},
]


@pytest.mark.parametrize("body", FEEDBACK_BODIES)
@pytest.mark.parametrize("trace", [None, "00-" + "a" * 32 + "-" + "b" * 16 + "-01"])
def test_a_feedback_event_built_alone_is_stored_as_the_aggregates_own(
    body: dict[str, Any], trace: str | None
) -> None:
    """SPEC C01, C05: the bus appends ``Feedback.recorded`` for a new feedback
    instead of building the aggregate through the library's ``_create``; stored, with or
    without a trace, it is byte for byte the event ``Feedback.record`` creates, and it loads
    as that feedback."""
    command = RecordFeedback.model_validate(
        {"projectId": "p1", "subjectKind": "run", "subjectRef": "run-42"} | body
    )
    store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    given = {
        "feedback_id": uuid.uuid4(),
        "tenant_id": "t1",
        "given_by": "alice",
        "given_at": AT,
        "command_id": "ce/urn:x/1",
        "request_digest": request_digest(command),
    }
    [created] = Feedback.record(command, **given).collect_events()
    alone = Feedback.recorded(command, **given)
    stamp(created, trace)
    stamp(alone, trace)
    assert store.mapper.to_stored_event(alone) == store.mapper.to_stored_event(created)
    store.events.put([alone])
    loaded = store.repository.get(given["feedback_id"])
    assert isinstance(loaded, Feedback)
    fresh = Feedback.record(command, **given)
    fresh.collect_events()
    assert vars(loaded) == vars(fresh)


def test_a_feedback_built_alone_is_checked_as_the_aggregate_is() -> None:
    """SPEC C02: the same refusal both ways (a rating needs its value)."""
    command = RecordFeedback.model_validate(
        {"projectId": "p1", "subjectKind": "run", "subjectRef": "r", "kind": "rating"}
    )
    given: dict[str, Any] = {
        "feedback_id": uuid.uuid4(),
        "tenant_id": "t1",
        "given_by": "alice",
        "given_at": AT,
        "command_id": "c",
        "request_digest": "d",
    }
    for way in (Feedback.record, Feedback.recorded):
        with pytest.raises(Refused, match="a rating needs a rating value"):
            way(command, **given)
