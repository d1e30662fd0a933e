"""How a sealed text is kept in its box (decisions D222), in memory: as its UTF-8 after a
zero byte; a box sealed before, in the JSON form, still opens; a text UTF-8 cannot hold keeps
the JSON form; the mapper's cached cipher is dropped once the key is destroyed."""

import base64
import json
from datetime import UTC, datetime
from uuid import uuid4

import pytest

from services.reports.domain import Report
from services.store import sealing
from services.store.event_store import EventStore
from services.store.sealing import ERASED

pytestmark = pytest.mark.unit


def store() -> EventStore:
    return EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})


def drafted(reporter: str, message: str) -> Report.Drafted:
    return Report.Drafted(
        originator_id=uuid4(), originator_version=1, timestamp=datetime.now(UTC),
        originator_topic="services.reports.domain:Report", tenant_id="t1", reporter=reporter,
        category="answer", message=message, thread=None, message_ref=None,
        extra_context=None, command_id="c1", prompt=None, context=["a", "b"], facts=None,
    )  # fmt: skip


def boxed(events: EventStore, event: Report.Drafted, state: bytes, field: str) -> bytes:
    """What the box of ``field`` holds, decrypted here."""
    sealed = json.loads(state)[field]
    opener = events.mapper._opener(sealed["sealed"])  # type: ignore[attr-defined]
    assert opener is not None
    raw = base64.b64decode(sealed["box"])
    place = sealing._place((event.originator_id, event.originator_version), field)
    return bytes(opener[1].decrypt(raw[:12], raw[12:], place))


def test_a_text_is_sealed_as_its_utf8_and_a_list_as_json() -> None:
    events = store()
    event = drafted("pat", "ünïcode words")
    stored = events.mapper.to_stored_event(event)
    assert boxed(events, event, stored.state, "message") == b"\x00" + "ünïcode words".encode()
    assert json.loads(boxed(events, event, stored.state, "context")) == {"v": ["a", "b"]}
    back = events.mapper.to_domain_event(stored)
    assert (back.message, back.context) == ("ünïcode words", ["a", "b"])  # type: ignore[attr-defined]


def test_a_box_sealed_in_the_json_form_before_still_opens(monkeypatch: pytest.MonkeyPatch) -> None:
    events = store()
    monkeypatch.setattr(sealing, "_plain_text", lambda value: None)  # as sealed before D222
    stored = events.mapper.to_stored_event(drafted("pat", "old words"))
    monkeypatch.undo()
    assert events.mapper.to_domain_event(stored).message == "old words"  # type: ignore[attr-defined]


def test_a_text_utf8_cannot_hold_keeps_the_json_form() -> None:
    assert sealing._plain_text("lone \ud800 surrogate") is None
    assert sealing._plain_text("fine") == b"\x00fine"


def test_the_cached_cipher_is_dropped_once_the_key_is_destroyed() -> None:
    events = store()
    stored = events.mapper.to_stored_event(drafted("pat", "pat's words"))
    assert events.mapper.to_domain_event(stored).message == "pat's words"  # type: ignore[attr-defined]
    assert events.mapper._openers  # type: ignore[attr-defined]  # pat's cipher cached
    assert events.data_keys.destroy_person("t1", "pat")
    assert events.mapper.to_domain_event(stored).message == ERASED  # type: ignore[attr-defined]
