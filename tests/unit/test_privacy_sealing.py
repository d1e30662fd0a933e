"""Sealing of declared personal fields (decisions D42) and retention months (D45), in memory."""

import json
from datetime import UTC, date, datetime
from uuid import uuid4

import pytest

from contracts.envelope import RunCompletedMessage
from services.datasets.domain import HarvestedRun
from services.evals.domain import EvalCase
from services.feedback.domain import Feedback
from services.permissions.agent_register import AgentRegistration
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


def registered(maintainers: list[str]) -> AgentRegistration.Registered:
    return AgentRegistration.Registered(
        originator_id=uuid4(), originator_version=1, timestamp=AT,
        originator_topic="services.permissions.agent_register:AgentRegistration",
        tenant_id="t1", agent="A/B", maintainers=maintainers, repository=None,
        registered_by="root",
    )  # fmt: skip


def test_a_field_naming_others_is_sealed_under_each_named_person_s_own_key() -> None:
    """Decisions D130: erasing one maintainer erases their id in the register, not another's."""
    store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    stored = store.mapper.to_stored_event(registered(["pat", "kim"]))
    assert b'"pat"' not in stored.state
    assert b'"kim"' not in stored.state
    assert store.mapper.to_domain_event(stored).maintainers == ["pat", "kim"]  # type: ignore[attr-defined]
    assert store.data_keys.destroy_person("t1", "pat")
    back = store.mapper.to_domain_event(stored)
    assert back.maintainers[0].startswith("erased:")  # type: ignore[attr-defined]
    assert back.maintainers[1:] == ["kim"]  # type: ignore[attr-defined]
    assert back.registered_by == "root"  # type: ignore[attr-defined]


def test_an_event_stored_before_a_field_was_sealed_reads_as_stored() -> None:
    """Decisions D131: no upcaster; a plain value of a now-sealed field stays plain."""
    store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    plain = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"}).mapper
    old = super(type(plain), plain).to_stored_event(drafted(store, "pat", "old words"))
    assert b"old words" in old.state
    back = store.mapper.to_domain_event(old)
    assert (back.message, back.reporter) == ("old words", "pat")  # type: ignore[attr-defined]


def test_an_erased_list_of_records_keeps_its_records() -> None:
    """A block's tool calls erase to records of ``[erased]``: readers keep their shape."""
    store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    event = drafted(store, "pat", "words")
    calls = [{"name": "Get", "arguments": "pat/notes", "result": "ok"}]
    facts = {"thread": "pat/_Thread/1", "tools_called": calls, "extra": {"Contact": "pat"}}
    object.__setattr__(event, "facts", facts)
    stored = store.mapper.to_stored_event(event)
    assert b"pat" not in stored.state
    assert store.data_keys.destroy_person("t1", "pat")
    back = store.mapper.to_domain_event(stored).facts  # type: ignore[attr-defined]
    assert back["tools_called"] == [dict.fromkeys(("arguments", "name", "result"), ERASED)]
    assert (back["thread"], back["extra"]) == (ERASED, {})


def test_a_key_of_each_record_of_a_list_is_sealed_at_a_place_of_its_own() -> None:
    """A run's threads: the agent's text and tool calls sealed, the score left to count."""
    store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    case_id = uuid4()
    key = store.data_keys.key_for("t1", "pat", "")
    store.data_keys.bind(case_id, key.key_id)
    threads = [
        {"index": i, "text": f"answer {i}", "toolCalls": [{"name": "Get", "arguments": "pat/x"}],
         "score": {"correct": True}}
        for i in range(2)
    ]  # fmt: skip
    event = EvalCase.RunRecorded(
        originator_id=case_id, originator_version=3, timestamp=AT,
        tenant_id="t1", agent="A/B",
        run_id="r1", ran_by="kim", model=None, effort="low", threads=threads, summary={},
    )  # fmt: skip
    stored = store.mapper.to_stored_event(event)
    assert b"answer" not in stored.state
    assert b"pat/x" not in stored.state
    assert store.mapper.to_domain_event(stored).threads == threads  # type: ignore[attr-defined]
    assert store.data_keys.destroy_person("t1", "pat")
    back = store.mapper.to_domain_event(stored)
    assert [t["text"] for t in back.threads] == [ERASED, ERASED]  # type: ignore[attr-defined]
    assert [t["score"] for t in back.threads] == [{"correct": True}] * 2  # type: ignore[attr-defined]
    assert back.threads[0]["toolCalls"] == [{"arguments": ERASED, "name": ERASED}]  # type: ignore[attr-defined]
    assert back.ran_by == "kim"  # type: ignore[attr-defined]


def feedback(subject_ref: str, given_by: str = "pat-4f1c") -> Feedback.Recorded:
    return Feedback.Recorded(
        originator_id=uuid4(), originator_version=1, timestamp=AT,
        originator_topic="services.feedback.domain:Feedback", tenant_id="t1", project_id="p1",
        subject_kind="run", subject_ref=subject_ref, kind="rating", rating=4, comment_ref=None,
        corrected_artifact_ref=None, given_by=given_by, command_id="c1", request_digest="d",
    )  # fmt: skip


def test_a_subject_ref_holding_its_givers_id_is_sealed_and_a_runs_id_stays_plain() -> None:
    """Decisions D137: a thread's ref that begins with the giver's id is sealed under the
    giver's key and erased with them (as an identity: distinct people stay distinct); a run's
    id names nobody and stays plain, so feedback on a run still counts and joins by it."""
    store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    named = store.mapper.to_stored_event(feedback("pat-4f1c/_Thread/2026-09-18-1319"))
    run = store.mapper.to_stored_event(feedback("run-7"))
    assert b"pat-4f1c" not in named.state
    assert b"_Thread" not in named.state
    assert b'"run-7"' in run.state
    assert store.mapper.to_stored_event(feedback("pat-4f1c/x")).state != named.state
    assert store.mapper.to_domain_event(named).subject_ref == "pat-4f1c/_Thread/2026-09-18-1319"  # type: ignore[attr-defined]
    assert store.data_keys.destroy_person("t1", "pat-4f1c")
    erased = store.mapper.to_domain_event(named)
    assert erased.subject_ref.startswith("erased:")  # type: ignore[attr-defined]
    assert store.mapper.to_domain_event(run).subject_ref == "run-7"  # type: ignore[attr-defined]


def test_a_subject_ref_stored_plain_before_it_was_sealed_reads_as_stored() -> None:
    """Decisions D131: an old event's plain subject ref holding its giver's id reads as it was."""
    store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    stored = store.mapper.to_stored_event(feedback("pat-4f1c/_Thread/1"))
    state = json.loads(stored.state)
    state["subject_ref"] = "pat-4f1c/_Thread/1"
    old = type(stored)(
        stored.originator_id, stored.originator_version, stored.topic, json.dumps(state).encode()
    )
    assert store.mapper.to_domain_event(old).subject_ref == "pat-4f1c/_Thread/1"  # type: ignore[attr-defined]


def test_a_harvested_run_keeps_no_field_the_contract_does_not_name() -> None:
    """Decisions D137: ``run`` is declared impersonal because RunCompleted has no field for who
    asked; a field a runtime adds (a requester, its words) is dropped, never stored."""
    run = RunCompletedMessage.model_validate({
        "specversion": "1.0", "id": "e1", "source": "runtime", "tenantid": "t1",
        "type": "factory.runs.v1.RunCompleted",
        "data": {
            "runId": "r1", "agentId": "a/b", "outcome": "succeeded",
            "inputRef": "sha256:" + "0" * 64, "completedAt": "2026-01-01T00:00:00Z",
            "requester": "pat-4f1c", "prompt": "pat-4f1c's words",
        },
    }).data  # fmt: skip
    store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    harvested = HarvestedRun.harvest(run, tenant_id="t1", at=AT)
    stored = [store.mapper.to_stored_event(e) for e in harvested.collect_events()]
    assert stored
    assert all(b"pat-4f1c" not in s.state for s in stored)
