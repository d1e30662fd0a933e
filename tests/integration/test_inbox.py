"""The Inbox read model on a real PostgreSQL: reports through their whole life."""

from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import uuid4

from contracts.labelled_block import LabelledBlock, ModelLine
from contracts.reports import (
    ComposeWrongAnswer,
    DraftReport,
    RecordHandOverDelivery,
    ReviewReport,
    ReviewReportCommand,
    SubmitReport,
)
from projections.inbox import Inbox, InboxFilter, get_report, list_inbox, report_lifecycle
from services.bus.issued import Issued
from services.processes.bootstrap import Runtime
from services.projecting.live import ProjectionRunner
from services.projecting.rebuild import rebuild
from services.reports.domain import Report
from tests.unit.test_report_facts import FABRICATED_BLOCK, as_version_1
from tests.unit.test_wrong_answer import SEED_FACTS

T0 = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)


async def send(runtime: Runtime, command: Any, key: str, at: datetime = T0) -> Any:
    outcome = await runtime.bus.execute(Issued(command, "t1", "rita", key, at))
    return outcome.result


async def caught_up(runtime: Runtime) -> ProjectionRunner:
    runner = ProjectionRunner(runtime.store, runtime.pool, Inbox())
    await runner.start()
    await runner.catch_up()
    return runner


async def test_a_report_lives_from_draft_to_resolved_in_the_inbox(runtime: Runtime) -> None:
    state = await send(runtime, ComposeWrongAnswer.model_validate(SEED_FACTS), "w1")
    await caught_up(runtime)
    assert (await list_inbox(runtime.pool, "t1", InboxFilter()))[0] == []  # a draft: not yet
    await send(runtime, SubmitReport(report_id=state.report_id), "s1")
    for status in ("Triaged", "Resolved"):
        review = ReviewReport.model_validate(
            {"status": status, "change": "re-indexed", "link": "https://example.org/c/1"}
        )
        await send(runtime, ReviewReportCommand(report_id=state.report_id, review=review), status)
    await caught_up(runtime)
    report = await get_report(runtime.pool, "t1", state.report_id, reader="rita")
    assert report is not None
    assert report["status"] == "Resolved"
    assert report["review"]["change"] == "re-indexed"
    assert report["review"]["link"] == "https://example.org/c/1"
    assert report["parsed"]["kind"] == "not-found"
    # Every step, not only the latest review: the triage stays after the resolution.
    steps = await report_lifecycle(runtime.pool, state.report_id)
    assert [(s["actor"], s["step"], s["detail"]) for s in steps] == [
        (report["reporter"], "drafted", None),
        (report["reporter"], "submitted", None),
        ("rita", "triaged", None),
        ("rita", "resolved", "re-indexed"),
    ]
    assert (
        await get_report(runtime.pool, "t2", state.report_id, reader="rita") is None
    )  # other tenants


async def test_the_inbox_filters_by_status_category_kind_agent_addressee_and_age(
    runtime: Runtime,
) -> None:
    seed = await send(runtime, ComposeWrongAnswer.model_validate(SEED_FACTS), "w1", T0)
    plain = await send(
        runtime, DraftReport(category="answer", message="not a good answer"), "d1", T0
    )
    question = await send(
        runtime, DraftReport(category="question", message="how do I share?"), "d2", T0
    )
    for n, state in enumerate((seed, plain, question)):
        await send(
            runtime, SubmitReport(report_id=state.report_id), f"s{n}", T0 + timedelta(days=n)
        )
    await caught_up(runtime)

    async def ids(**where: Any) -> set[str]:
        items, _ = await list_inbox(runtime.pool, "t1", InboxFilter(**where))
        return {i["reportId"] for i in items}

    every = {str(s.report_id) for s in (seed, plain, question)}
    assert await ids() == every
    assert await ids(category="question") == {str(question.report_id)}
    assert await ids(kind="not-found") == {str(seed.report_id)}
    assert await ids(agent="AgenticOffice/Agent/OfficeCoach") == {str(seed.report_id)}
    assert await ids(agent="(unknown agent)") == {str(plain.report_id), str(question.report_id)}
    assert await ids(addressee="agent owner") == {str(seed.report_id)}
    assert await ids(submitted_before=T0 + timedelta(hours=1)) == {str(seed.report_id)}
    assert await ids(submitted_after=T0 + timedelta(days=1)) == {
        str(plain.report_id),
        str(question.report_id),
    }
    assert await ids(status="Triaged") == set()


async def test_a_failed_hand_over_is_shown_and_a_rebuild_equals_the_live_inbox(
    runtime: Runtime,
) -> None:
    bug = await send(runtime, DraftReport(category="bug", message="crash on save"), "b1")
    await send(runtime, SubmitReport(report_id=bug.report_id), "s1")
    for attempt, final in ((1, False), (2, True)):
        await send(
            runtime,
            RecordHandOverDelivery(report_id=bug.report_id, status_code=500, error="HTTP 500",
                                   final=final),
            f"d{attempt}",
        )  # fmt: skip
    live = await caught_up(runtime)
    items, _ = await list_inbox(runtime.pool, "t1", InboxFilter())
    assert [i["handOver"] for i in items] == [
        {"handedOver": True, "attempts": 2, "failed": True, "lastError": "HTTP 500"}
    ]
    fresh = await rebuild(runtime.store, runtime.pool, Inbox(), swap=False)
    for query in (
        "SELECT * FROM {}.reports ORDER BY report_id",
        "SELECT * FROM {}.report_steps ORDER BY report_id, position",
    ):
        assert [tuple(r) for r in await runtime.pool.fetch(query.format(fresh))] == [
            tuple(r) for r in await runtime.pool.fetch(query.format(live.schema))
        ]


async def test_a_kind_fabricated_free_text_report_is_listed_as_fabricated(
    runtime: Runtime,
) -> None:
    """SPEC §3.4: the Inbox shows the canonical kind the handler stored."""
    body = {"category": "answer", "message": "made up", "extraContext": FABRICATED_BLOCK}
    state = await send(runtime, DraftReport.model_validate(body), "d1")
    await send(runtime, SubmitReport(report_id=state.report_id), "s1")
    await caught_up(runtime)
    items, _ = await list_inbox(runtime.pool, "t1", InboxFilter(kind="fabricated"))
    assert [(i["reportId"], i["parsed"]["kind"]) for i in items] == [
        (str(state.report_id), "fabricated")
    ]


async def test_the_inbox_shows_the_stored_facts_never_the_text_parsed_again(
    runtime: Runtime,
) -> None:
    """What a rebuild produces depends on the stored facts only, so a parser change
    cannot change it. Here the facts and the text disagree on purpose: the facts win."""
    report = Report.draft(
        DraftReport(category="answer", message="wrong", extra_context="Kind: other\nAgent: X"),
        report_id=uuid4(), tenant_id="t1", reporter="rita", at=T0, command_id="c",
        facts=LabelledBlock(kind="fabricated", agent="A/B", model=ModelLine("m1")),
    )  # fmt: skip
    report.submit(at=T0)
    runtime.store.save(report)
    await caught_up(runtime)
    row = await get_report(runtime.pool, "t1", report.id, reader="rita")
    assert row is not None
    assert row["parsed"] == {"kind": "fabricated", "agent": "A/B", "model": "m1", "addressee": None}


async def test_an_old_report_holding_only_its_text_is_projected_with_its_facts(
    runtime: Runtime,
) -> None:
    """A v1 ``Drafted`` (no facts) in PostgreSQL is upcast when the projection reads it."""
    report = Report.draft(
        DraftReport(category="answer", message="wrong", extra_context=FABRICATED_BLOCK),
        report_id=uuid4(), tenant_id="t1", reporter="rita", at=T0, command_id="c", facts=None,
    )  # fmt: skip
    (drafted,) = report.collect_events()
    store = runtime.store
    store.recorder.insert_events(
        [as_version_1(store.mapper.to_stored_event(drafted), store, "facts")]
    )
    await caught_up(runtime)
    row = await get_report(runtime.pool, "t1", report.id, reader="rita")
    assert row is not None
    assert (row["parsed"]["kind"], row["parsed"]["agent"]) == (
        "fabricated",
        "AgenticOffice/Agent/OfficeCoach",
    )
