"""The store writes an event's JSON byte for byte as the library's transcoder would (issue 12):
orjson for plain values, the library's encoder for anything else."""

import uuid
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest
from eventsourcing.persistence import JSONTranscoder, TranscodingNotRegisteredError

from services.bus import Receipt, receipt_id
from services.store import EventStore, FastJSONTranscoder, plain_json


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
    """Issue 12: the bus appends ``Receipt.recorded`` without building the aggregate; stored,
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
