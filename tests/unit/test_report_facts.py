"""A report's facts are decided once, at the door, and stored on ``Report.Drafted`` (SPEC
§3.4 as amended). The store is the eventsourcing library's own in-memory
persistence, so every event here really goes through the library's mapper and back."""

from datetime import UTC, datetime
from typing import Any
from uuid import UUID, uuid4

from eventsourcing.persistence import StoredEvent

from contracts.labelled_block import LabelledBlock, parse
from contracts.reports import ComposeWrongAnswer, DraftReport, SubmitReport
from services.bus.issued import Issued
from services.declaration import registry
from services.evals.lift import lift
from services.kafka.publication import to_message
from services.processes.published import by_event
from services.reports.context import REPORTS
from services.reports.domain import Report
from services.store.event_store import EventStore
from tests.unit.test_wrong_answer import SEED_BLOCK, SEED_FACTS

AT = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
FABRICATED_BLOCK = SEED_BLOCK.replace("Kind: not-found", "Kind: Fabricated")


def memory_store() -> EventStore:
    """The real library on its in-memory (POPO) persistence: not a mock."""
    return EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})


def handle(store: EventStore, command: Any, command_id: str = "c1") -> Any:
    """Decide with the real handler and save what it decided, as the bus does."""
    decision = registry((REPORTS,)).handlers[type(command)](
        store, Issued(command, "t", "rita", command_id, AT)
    )
    store.save(*decision.aggregates)
    return decision.result


def stored_events(store: EventStore) -> list[Any]:
    """Every event in the log, read back through the library's mapper (upcasters included)."""
    notifications = store.recorder.select_notifications(start=1, limit=10_000)
    return [store.mapper.to_domain_event(n) for n in notifications]


def free_text_report(store: EventStore, extra: str, category: str = "answer") -> UUID:
    body = {"category": category, "message": "it made that up", "extraContext": extra}
    state = handle(store, DraftReport.model_validate(body))
    report_id: UUID = state.report_id
    return report_id


def test_a_free_text_kind_fabricated_is_stored_as_fabricated() -> None:
    """SPEC §3.4: ``Kind:`` is matched case-insensitively, stored canonical."""
    store = memory_store()
    free_text_report(store, FABRICATED_BLOCK)
    (drafted,) = stored_events(store)
    assert isinstance(drafted, Report.Drafted)
    assert drafted.facts is not None
    assert drafted.facts["kind"] == "fabricated"
    assert drafted.facts["agent"] == "AgenticOffice/Agent/OfficeCoach"
    assert drafted.extra_context == FABRICATED_BLOCK  # the text the reporter sees is kept


def test_a_fabricated_report_notifies_the_agent_owner_and_the_notice_maps_to_kafka() -> None:
    """The owner notice says ``fabricated`` and the relay's mapping accepts it."""
    store = memory_store()
    report_id = free_text_report(store, FABRICATED_BLOCK)
    handle(store, SubmitReport(report_id=report_id), "s1")
    notices = [e for e in stored_events(store) if isinstance(e, Report.AgentOwnerNotified)]
    assert [notice.kind for notice in notices] == ["fabricated"]
    message = to_message(by_event()[Report.AgentOwnerNotified], notices[0], "urn:test")
    assert b'"kind":"fabricated"' in (message.value or b"").replace(b" ", b"")


def test_an_unknown_kind_is_kept_as_text_and_notifies_nobody() -> None:
    """SPEC §3.4: an unknown kind is kept as written, never an error downstream."""
    store = memory_store()
    report_id = free_text_report(store, "Kind: Halluzination\nAgent: A/B")
    handle(store, SubmitReport(report_id=report_id), "s1")
    drafted, submitted = stored_events(store)
    assert drafted.facts["kind"] == "Halluzination"
    assert isinstance(submitted, Report.Submitted)  # and no AgentOwnerNotified


def test_submit_reads_the_stored_facts_never_the_text() -> None:
    """Nothing downstream parses the text again; the facts decided at the door rule."""
    says_other = DraftReport(category="answer", message="wrong", extra_context="Kind: other")
    decided = LabelledBlock(kind="fabricated", agent="A/B", addressee="agent owner (A/B)")
    report = Report.draft(
        says_other, report_id=uuid4(), tenant_id="t", reporter="rita", at=AT, command_id="c",
        facts=decided,
    )  # fmt: skip
    report.submit(at=AT)
    notices = [e for e in report.collect_events() if isinstance(e, Report.AgentOwnerNotified)]
    assert [(n.kind, n.agent, n.addressee) for n in notices] == [
        ("fabricated", "A/B", "agent owner (A/B)")
    ]


def test_a_composed_report_stores_the_structured_record_not_the_text_read_back() -> None:
    """A tool result that reads like a second call in the text stays one call."""
    reply = {**SEED_FACTS["reply"], "toolCalls": [
        {"name": "Get", "arguments": "AgenticOffice/01-Willkommen", "result": "ok, Get(x) too"}
    ]}  # fmt: skip
    store = memory_store()
    handle(store, ComposeWrongAnswer.model_validate({**SEED_FACTS, "reply": reply}))
    (drafted,) = stored_events(store)
    assert drafted.facts["tools_called"] == [
        {"name": "Get", "arguments": "AgenticOffice/01-Willkommen", "result": "ok, Get(x) too"}
    ]
    assert drafted.facts["model"] == {
        "actual": "claude-sonnet-4-5",
        "requested": None,
        "harness": "native",
    }


def as_version_1(stored: StoredEvent, store: EventStore, drop: str | None) -> StoredEvent:
    """The stored event as the v1 class wrote it: no class_version, and without ``drop``."""
    state = store.mapper.transcoder.decode(stored.state)
    state.pop("class_version")
    if drop is not None:
        state.pop(drop)
    return StoredEvent(
        originator_id=stored.originator_id,
        originator_version=stored.originator_version,
        topic=stored.topic,
        state=store.mapper.transcoder.encode(state),
    )


def test_an_old_drafted_event_holding_only_the_text_loads_with_typed_facts() -> None:
    """The upcaster parses v1's text once when the old event is loaded."""
    report = Report.draft(
        DraftReport(category="answer", message="wrong", extra_context=FABRICATED_BLOCK),
        report_id=uuid4(), tenant_id="t", reporter="rita", at=AT, command_id="c", facts=None,
    )  # fmt: skip
    (new,) = report.collect_events()
    store = memory_store()
    store.recorder.insert_events([as_version_1(store.mapper.to_stored_event(new), store, "facts")])

    loaded: Report = store.repository.get(report.id)
    assert loaded.facts is not None
    assert (loaded.facts.kind, loaded.facts.agent) == (
        "fabricated",
        "AgenticOffice/Agent/OfficeCoach",
    )
    assert loaded.facts.expected == "Konzept-Ansatz CHF 150 steht im Firmenprofil"
    (drafted,) = stored_events(store)
    assert drafted.facts["kind"] == "fabricated"


def test_an_old_drafted_event_with_guillemets_around_expected_loads_them_stripped() -> None:
    """SPEC §3.4 (amended): a v1 event kept only its text, and the upcaster reads it with the
    rule of today, so its Expected (and the mustAssert lifted from it) has no quotes left."""
    text = FABRICATED_BLOCK.replace(
        '"Konzept-Ansatz CHF 150 steht im Firmenprofil"', "«Konzept-Ansatz CHF 150»"
    )
    report = Report.draft(
        DraftReport(category="answer", message="wrong", extra_context=text),
        report_id=uuid4(), tenant_id="t", reporter="rita", at=AT, command_id="c", facts=None,
        prompt="Welcher Stundenansatz?",
    )  # fmt: skip
    report.submit(at=AT)
    drafted, *later = report.collect_events()
    store = memory_store()
    store.recorder.insert_events(
        [as_version_1(store.mapper.to_stored_event(drafted), store, "facts")]
        + [store.mapper.to_stored_event(event) for event in later]
    )
    loaded: Report = store.repository.get(report.id)
    assert loaded.facts is not None
    assert loaded.facts.expected == "Konzept-Ansatz CHF 150"
    assert lift(loaded).must_assert == "Konzept-Ansatz CHF 150"


def test_an_old_notice_with_a_capitalised_kind_loads_canonical_and_maps() -> None:
    """A v1 notice stored as ``Fabricated`` goes through the relay's mapping."""
    report = Report.draft(
        DraftReport(category="answer", message="wrong"), report_id=uuid4(), tenant_id="t",
        reporter="rita", at=AT, command_id="c", facts=None,
    )  # fmt: skip
    report._agent_owner_notified(
        timestamp=AT, tenant_id="t", kind="Fabricated", agent="A/B", addressee="agent owner"
    )
    drafted, notice = report.collect_events()
    store = memory_store()
    store.recorder.insert_events(
        [
            store.mapper.to_stored_event(drafted),
            as_version_1(store.mapper.to_stored_event(notice), store, None),
        ]
    )
    loaded = stored_events(store)[1]
    assert loaded.kind == "fabricated"
    to_message(by_event()[Report.AgentOwnerNotified], loaded, "urn:test")


def test_the_lift_of_a_kind_fabricated_report_reads_its_stored_facts() -> None:
    """SPEC §3.5: ``Kind: Fabricated`` lifts as fabricated (mustNotAssert filled)."""
    text = FABRICATED_BLOCK.replace(
        '"Ich weiss leider nicht, welchen Stundenansatz du verrechnest…"', "„CHF 180 pro Stunde“"
    )
    report = Report.draft(
        DraftReport(category="answer", message="wrong", extra_context=text),
        report_id=uuid4(), tenant_id="t", reporter="rita", at=AT, command_id="c",
        facts=parse(text), prompt="Welcher Stundenansatz?",
    )  # fmt: skip
    report.submit(at=AT)
    store = memory_store()
    store.save(report)
    definition = lift(store.repository.get(report.id))
    assert definition.must_not_assert == ["180"]
    assert definition.agent == "AgenticOffice/Agent/OfficeCoach"
