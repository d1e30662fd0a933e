"""Sealing of declared personal fields (decisions D42) and retention months (D45), in memory."""

import json
from datetime import UTC, date, datetime
from uuid import uuid4

import pytest

from services.evals.domain import EvalCase
from services.privacy.retention import first_month_kept
from services.reports.domain import Report
from services.store.event_store import EventStore
from services.store.sealing import ERASED, BrokenSeal

pytestmark = pytest.mark.unit
AT = datetime(2026, 11, 27, 9, tzinfo=UTC)


def drafted(store: EventStore, reporter: str, message: str) -> Report.Drafted:
    event = Report.Drafted(
        originator_id=uuid4(), originator_version=1, timestamp=AT,
        originator_topic="services.reports.domain:Report", tenant_id="t1", reporter=reporter,
        category="answer", message=message, thread=None, message_ref=None,
        extra_context="Kind: not-found", command_id="c1", prompt=None,
        context=["one", "two"], facts=None,
    )  # fmt: skip
    return event


def test_a_personal_field_is_stored_sealed_and_read_back_plain() -> None:
    store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    event = drafted(store, "pat", "my own words")
    stored = store.mapper.to_stored_event(event)
    assert b"my own words" not in stored.state
    assert b"pat" not in stored.state
    back = store.mapper.to_domain_event(stored)
    assert (back.message, back.reporter, back.context) == ("my own words", "pat", ["one", "two"])  # type: ignore[attr-defined]
    # The same event is always stored as the same bytes (a repeated command stores alike).
    assert store.mapper.to_stored_event(event).state == stored.state


def test_once_the_key_is_destroyed_the_event_decodes_as_erased_keeping_types_and_counts() -> None:
    store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    stored = store.mapper.to_stored_event(drafted(store, "pat", "my own words"))
    other = store.mapper.to_stored_event(drafted(store, "kim", "kim's words"))
    assert store.data_keys.destroy_person("t1", "pat")
    back = store.mapper.to_domain_event(stored)
    assert back.message == ERASED  # type: ignore[attr-defined]
    assert back.context == [ERASED, ERASED]  # type: ignore[attr-defined]
    assert back.reporter.startswith("erased:")  # type: ignore[attr-defined]
    assert back.thread is None  # type: ignore[attr-defined]  # nothing was sealed there
    assert store.mapper.to_domain_event(other).message == "kim's words"  # type: ignore[attr-defined]


def test_a_sealed_box_moved_to_another_event_does_not_open_and_is_no_erasure() -> None:
    """Decisions D142: its key is there, so it is tampering, not an erasure: it raises (the
    reader parks it) instead of reading as ``[erased]``."""
    store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    one = store.mapper.to_stored_event(drafted(store, "pat", "first"))
    two = store.mapper.to_stored_event(drafted(store, "pat", "second"))
    moved = type(one)(two.originator_id, two.originator_version, one.topic, one.state)
    with pytest.raises(BrokenSeal, match="field 'message'"):
        store.mapper.to_domain_event(moved)


@pytest.mark.parametrize("changed", ["a character", "not base64"])
def test_a_sealed_box_changed_raises_while_an_erased_one_reads_erased(changed: str) -> None:
    store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    stored = store.mapper.to_stored_event(drafted(store, "pat", "first"))
    state = json.loads(stored.state)
    box = state["message"]["box"]
    state["message"]["box"] = (
        box[:5] + ("A" if box[5] != "A" else "B") + box[6:] if changed == "a character" else "*"
    )
    tampered = type(stored)(
        stored.originator_id, stored.originator_version, stored.topic, json.dumps(state).encode()
    )
    with pytest.raises(BrokenSeal):
        store.mapper.to_domain_event(tampered)
    store.data_keys.destroy_person("t1", "pat")  # once the key is gone, it is erased
    assert store.mapper.to_domain_event(tampered).message == ERASED  # type: ignore[attr-defined]


def test_a_case_lifted_from_a_report_is_sealed_under_the_reports_key() -> None:
    store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    draft = drafted(store, "pat", "words")
    store.mapper.to_stored_event(draft)
    lifted = EvalCase.Lifted(
        originator_id=uuid4(), originator_version=2, timestamp=AT, tenant_id="t1",
        source=str(draft.originator_id), ref="_Evals/x", agent="A", prompt="pat's question",
        context=[], must_ground=[], must_not_assert=[], must_assert=None, model=None,
    )  # fmt: skip
    stored = store.mapper.to_stored_event(lifted)
    assert b"pat's question" not in stored.state
    store.data_keys.destroy_person("t1", "pat")
    assert store.mapper.to_domain_event(stored).prompt == ERASED  # type: ignore[attr-defined]


def test_a_period_keeps_its_months_and_erases_the_ones_before() -> None:
    assert first_month_kept(date(2026, 12, 2), 12) == "2025-12"
    assert first_month_kept(date(2026, 1, 31), 1) == "2025-12"
    assert first_month_kept(date(2026, 3, 1), 14) == "2025-01"
