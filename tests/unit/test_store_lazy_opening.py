"""Sealed fields opened where they are read (decisions D290, D291), in memory: the log
readers' decoding (``services.store.lazy_opening``) gives every field the plain path gives,
for every event class that declares personal fields; a box is decrypted only when its field is
read, once; read after an erasure it is erased; a changed box is an incident when it is read
(decisions D142), never when the event is only decoded."""

import json
import pickle
from dataclasses import fields
from functools import partial
from typing import Any

import pytest
from eventsourcing.domain import DomainEvent
from eventsourcing.persistence import StoredEvent
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.store.event_store import EventStore
from services.store.lazy_opening import HELD, decode_lazily
from services.store.sealing import ERASED, BrokenSeal, SealingMapper, personal_of
from tests.unit.test_privacy_sealing import drafted, feedback, registered
from tests.unit.test_store_decode import EVENT_CLASSES, events_of, identical, outcome

pytestmark = pytest.mark.unit
PERSONAL = [cls for cls in EVENT_CLASSES if personal_of(cls) is not None]


def new_store() -> tuple[EventStore, SealingMapper]:
    store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    assert isinstance(store.mapper, SealingMapper)
    return store, store.mapper


def test_the_event_classes_with_personal_fields_are_found() -> None:
    names = {cls.__qualname__ for cls in PERSONAL}
    assert {"Feedback.Recorded", "Report.Drafted", "EvalCase.RunRecorded"} <= names


@pytest.mark.parametrize("cls", PERSONAL, ids=lambda cls: cls.__qualname__)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_field_read_lazily_is_what_the_plain_path_reads(
    cls: type[DomainEvent], data: st.DataObject
) -> None:
    """The fast path's one equivalence test (STYLE 15): every field, words and erased alike."""
    store, mapper = new_store()
    event = data.draw(events_of(cls))
    try:
        stored = mapper.to_stored_event(event)
    except (UnicodeEncodeError, ValueError, TypeError):
        return  # not storable: nothing to read back
    for erased in (False, True):
        if erased:  # every key gone: every sealed field reads as erased, both ways
            for key_id in list(store.data_keys._by_id):  # type: ignore[attr-defined]
                store.data_keys._by_id[key_id] = None  # type: ignore[attr-defined]
            store.data_keys.generation += 1  # type: ignore[attr-defined]
        decoded = outcome(mapper.to_domain_event, stored)
        if decoded[0] == "error":  # a document the library reads no event from: alike
            assert outcome(lambda s: decode_lazily(mapper, s), stored) == decoded
            return
        plain, lazy = decoded[1], decode_lazily(mapper, stored)
        assert type(lazy) is type(plain)
        names = [f.name for f in fields(plain)] + list(vars(plain))  # type: ignore[arg-type]
        for name in names:
            mine = outcome(partial(getattr, lazy), name)
            theirs = outcome(partial(getattr, plain), name)
            assert mine[0] == theirs[0], name
            assert identical(mine[1], theirs[1]) if mine[0] == "value" else mine == theirs
        assert set(vars(lazy)) - {HELD} <= set(vars(plain))


def test_a_box_is_decrypted_only_when_its_field_is_read_and_only_once() -> None:
    store, mapper = new_store()
    stored = [mapper.to_stored_event(drafted(store, "pat", f"words {n}")) for n in range(3)]
    events: list[Any] = [decode_lazily(mapper, s) for s in stored]
    # A reader that reads only what names no one (a count, a status) decrypts nothing.
    assert [(e.category, e.tenant_id, e.originator_version) for e in events] == [
        ("answer", "t1", 1)
    ] * 3
    assert mapper.opened == 0
    assert events[0].message == "words 0"
    assert mapper.opened == 1  # that field of that event only
    assert events[0].message == "words 0"
    assert mapper.opened == 1  # kept as the event's own attribute
    assert vars(events[0])["message"] == "words 0"
    assert events[0].reporter == "pat"
    assert mapper.opened == 2


def test_a_box_read_after_its_key_is_destroyed_is_erased_though_decoded_before() -> None:
    store, mapper = new_store()
    words = mapper.to_stored_event(drafted(store, "pat", "pat's words"))
    kims = mapper.to_stored_event(drafted(store, "kim", "kim's words"))
    decoded: list[Any] = [decode_lazily(mapper, words), decode_lazily(mapper, kims)]

    assert store.data_keys.destroy_person("t1", "pat")

    assert decoded[0].message == ERASED  # never the words
    assert decoded[0].reporter.startswith("erased:")
    assert decoded[0].context == [ERASED, ERASED]
    assert decoded[1].message == "kim's words"


def tampered(stored: StoredEvent) -> StoredEvent:
    state = json.loads(stored.state)
    box = state["message"]["box"]
    state["message"]["box"] = box[:5] + ("A" if box[5] != "A" else "B") + box[6:]
    return StoredEvent(
        stored.originator_id, stored.originator_version, stored.topic, json.dumps(state).encode()
    )


def test_a_changed_box_is_an_incident_when_its_field_is_read_every_time() -> None:
    """Decisions D142: decoding does not open it; reading it raises, as the plain path does,
    so the reader that reads the words parks the event."""
    store, mapper = new_store()
    event: Any = decode_lazily(mapper, tampered(mapper.to_stored_event(drafted(store, "pat", "x"))))
    assert event.category == "answer"
    for _ in range(2):  # a failed box is not kept as read
        with pytest.raises(BrokenSeal, match="field 'message'"):
            _ = event.message
    assert event.reporter == "pat"  # the other fields open
    store.data_keys.destroy_person("t1", "pat")
    assert event.message == ERASED  # once its key is gone, it is erased (as the plain path)


def test_a_list_of_names_and_a_naming_field_open_where_read() -> None:
    _, mapper = new_store()
    register: Any = decode_lazily(mapper, mapper.to_stored_event(registered(["pat", "kim"])))
    given: Any = decode_lazily(mapper, mapper.to_stored_event(feedback("pat-4f1c/_Thread/1")))
    run: Any = decode_lazily(mapper, mapper.to_stored_event(feedback("run-7")))
    assert mapper.opened == 0
    assert (run.subject_ref, run.rating) == ("run-7", 4)  # stored plain: nothing to open
    assert mapper.opened == 0
    assert register.maintainers == ["pat", "kim"]
    assert given.subject_ref == "pat-4f1c/_Thread/1"
    assert given.given_by == "pat-4f1c"
    assert mapper.opened == 4


def test_an_event_handed_to_another_process_carries_its_words_not_its_boxes() -> None:
    """A rebuild's worker hands staged events to the rebuild: pickled opened, read there as
    the plain path reads them (the keys stay in the process that holds them)."""
    store, mapper = new_store()
    event = decode_lazily(mapper, mapper.to_stored_event(drafted(store, "pat", "my words")))
    back: Any = pickle.loads(pickle.dumps(event))
    assert (back.message, back.reporter) == ("my words", "pat")
    assert b"my words" in pickle.dumps(event)


def test_a_changed_box_handed_to_another_process_is_still_an_incident_there() -> None:
    store, mapper = new_store()
    event = decode_lazily(mapper, tampered(mapper.to_stored_event(drafted(store, "pat", "x"))))
    back: Any = pickle.loads(pickle.dumps(event))
    assert back.reporter == "pat"
    with pytest.raises(BrokenSeal, match="field 'message'"):
        _ = back.message
