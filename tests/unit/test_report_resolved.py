"""The reporter hears back (SPEC W32, W33; decisions D51): closing a report as Resolved or
WontFix tells its reporter the outcome, and the notice maps to the ``report-resolved`` v2
CloudEvent, which names nobody: whom to tell and what changed are read at ``reportPath``
(decisions D139); triage tells nobody."""

import json
from typing import Any

from contracts.reports import DraftReport, ReviewReport, ReviewReportCommand, SubmitReport
from services.kafka.publication import to_message
from services.processes.published import by_event
from services.reports.domain import Report
from tests.unit.test_report_facts import handle, memory_store, stored_events


def reviewed(*moves: dict[str, Any]) -> list[Any]:
    store = memory_store()
    draft = DraftReport.model_validate({"category": "answer", "message": "it made that up"})
    report_id = handle(store, draft).report_id
    handle(store, SubmitReport(report_id=report_id), "s1")
    for n, move in enumerate(moves):
        command = ReviewReportCommand(report_id=report_id, review=ReviewReport(**move))
        handle(store, command, f"r{n}")
    return [e for e in stored_events(store) if isinstance(e, Report.ReporterNotified)]


def published(notice: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(to_message(by_event()[type(notice)], notice, "test").value)[
        "data"
    ]
    return data


def test_a_resolved_report_tells_its_reporter_what_changed_and_where() -> None:
    (notice,) = reviewed(
        {"status": "Triaged"},
        {"status": "Resolved", "change": "Searches the profile", "link": "https://x.org/c/1"},
    )
    # The event keeps the whole notice, sealed in the store (D42) ...
    assert (notice.reporter, notice.change, notice.link) == (
        "rita",  # the reporter, not the reviewer who closed it
        "Searches the profile",
        "https://x.org/c/1",
    )
    # ... the CloudEvent names nobody and says no reviewer's words: by reference (D139).
    assert published(notice) == {
        "reportId": str(notice.originator_id),
        "tenantId": "t",
        "outcome": "Resolved",
        "reportPath": f"/factory/reports/{notice.originator_id}",
    }


def test_a_report_closed_wontfix_tells_its_reporter_why() -> None:
    (notice,) = reviewed({"status": "Triaged"}, {"status": "WontFix", "reason": "By design"})
    assert (notice.reporter, notice.outcome, notice.reason) == ("rita", "WontFix", "By design")
    data = published(notice)
    assert data["outcome"] == "WontFix"
    assert "rita" not in json.dumps(data)
    assert "By design" not in json.dumps(data)


def test_triage_alone_tells_the_reporter_nothing() -> None:
    assert reviewed({"status": "Triaged"}) == []
