"""How a sealed text is kept in its box (decisions D222), in memory: as its UTF-8 after a
zero byte, a list as JSON; a text UTF-8 cannot hold is refused as the plain mapper refuses it;
the mapper's cached key is dropped once the key is destroyed. A box sealed before in the JSON
form, byte for byte: ``tests/unit/test_sealing_stored_form.py``."""

import base64
import json
from datetime import UTC, datetime
from uuid import uuid4

import pytest
from eventsourcing.persistence import Mapper

from services.reports.domain import Report
from services.store.event_store import EventStore
from services.store.sealing import ERASED
from services.store.sealing_boxes import place

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
    at = place(event.originator_id, event.originator_version) + field.encode()
    return bytes(opener.cipher.decrypt(raw[:12], raw[12:], at))


def test_a_text_is_sealed_as_its_utf8_and_a_list_as_json() -> None:
    events = store()
    event = drafted("pat", "ünïcode words")
    stored = events.mapper.to_stored_event(event)
    assert boxed(events, event, stored.state, "message") == b"\x00" + "ünïcode words".encode()
    assert json.loads(boxed(events, event, stored.state, "context")) == {"v": ["a", "b"]}
    back = events.mapper.to_domain_event(stored)
    assert (back.message, back.context) == ("ünïcode words", ["a", "b"])  # type: ignore[attr-defined]


def test_a_text_utf8_cannot_hold_is_refused_as_the_plain_mapper_refuses_it() -> None:
    """A lone surrogate: sealed, it takes the JSON form, whose encoder refuses it as the
    library's mapper refuses the same event unsealed; nothing is stored half-sealed."""
    events = store()
    event = drafted("pat", "lone \ud800 surrogate")
    with pytest.raises(UnicodeEncodeError):
        Mapper(events.mapper.transcoder).to_stored_event(event)
    with pytest.raises(UnicodeEncodeError):
        events.mapper.to_stored_event(event)


def test_the_cached_key_is_dropped_once_the_key_is_destroyed() -> None:
    events = store()
    stored = events.mapper.to_stored_event(drafted("pat", "pat's words"))
    assert events.mapper.to_domain_event(stored).message == "pat's words"  # type: ignore[attr-defined]
    assert events.mapper._openers  # type: ignore[attr-defined]  # pat's cipher cached
    assert events.data_keys.destroy_person("t1", "pat")
    assert events.mapper.to_domain_event(stored).message == ERASED  # type: ignore[attr-defined]
