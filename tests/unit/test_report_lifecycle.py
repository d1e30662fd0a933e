"""The Report aggregate: given a report, when a command, then events or an error."""

from datetime import UTC, datetime
from typing import Any
from uuid import uuid4

import pytest

from contracts.errors import InvalidTransition
from contracts.labelled_block import parse
from contracts.reports import DraftReport
from services.reports.domain import Report
from tests.unit.test_wrong_answer import SEED_BLOCK

AT = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)


def draft(category: str = "answer", message: str = "x", extra: str | None = None) -> Report:
    command = DraftReport.model_validate(
        {"category": category, "message": message, "extraContext": extra}
    )
    return Report.draft(
        command, report_id=uuid4(), tenant_id="t", reporter="rita", at=AT, command_id="c",
        facts=parse(extra),  # as the command handler does at the door
    )  # fmt: skip


def events(report: Report) -> list[str]:
    return [type(e).__name__ for e in report.collect_events()]


def test_a_draft_is_neither_handed_over_nor_in_the_inbox() -> None:
    """SPEC W27: a draft is a preview until Submit."""
    report = draft("bug", "the export button does nothing")
    assert report.status == "Draft"
    assert events(report) == ["Drafted"]


@pytest.mark.parametrize(
    ("category", "message", "handed_over"),
    [
        ("bug", "a typo", True),  # W22
        ("idea", "dark mode please", True),  # W23
        ("praise", "error-free and great", False),  # W24
        ("question", "why does the page show a 500 error?", True),  # W25
        ("question", "how do I invite a colleague?", False),  # W25
        ("answer", "it doesn't know, it is wrong, 500 error timeout", False),  # W21
    ],
)
def test_submit_hands_over_by_category_and_words(
    category: str, message: str, handed_over: bool
) -> None:
    report = draft(category, message)
    report.submit(at=AT)
    assert events(report)[-1] == ("HandedOver" if handed_over else "Submitted")
    assert report.status == ("HandedOver" if handed_over else "New")


def test_submitting_twice_changes_nothing() -> None:
    report = draft()
    report.submit(at=AT)
    report.collect_events()
    report.submit(at=AT)
    assert events(report) == []


def test_an_agent_owner_kind_notifies_the_agents_owner() -> None:
    """SPEC W35 (optional in the seed, done here): not-found names the agent's owner."""
    report = draft(extra=SEED_BLOCK)
    report.submit(at=AT)
    emitted: Any = report.collect_events()
    notified = [e for e in emitted if isinstance(e, Report.AgentOwnerNotified)]
    assert len(notified) == 1
    assert notified[0].agent == "AgenticOffice/Agent/OfficeCoach"
    assert notified[0].addressee.startswith("agent owner (AgenticOffice/Agent/OfficeCoach")


def test_a_report_without_a_block_notifies_nobody() -> None:
    report = draft(extra="just some context")
    report.submit(at=AT)
    assert "AgentOwnerNotified" not in events(report)


def test_a_reviewer_moves_a_report_new_triaged_resolved_saying_what_changed() -> None:
    """SPEC W32, W33."""
    report = draft()
    report.submit(at=AT)
    report.review("Triaged", reviewed_by="rev", at=AT)
    report.review("Resolved", reviewed_by="rev", at=AT, change="profile re-indexed", link=None)
    emitted: Any = report.collect_events()
    # The reporter is told too (decisions D51): tests/unit/test_report_resolved.py.
    assert [type(e).__name__ for e in emitted][-3:] == ["Triaged", "Resolved", "ReporterNotified"]
    assert (emitted[-2].reviewed_by, emitted[-2].change) == ("rev", "profile re-indexed")


@pytest.mark.parametrize(
    ("moves", "refused"),
    [
        ([], "Resolved"),  # New → Resolved skips triage
        (["Triaged", "Resolved"], "New"),  # Resolved → New
        (["Triaged", "WontFix"], "Triaged"),
        ([], "New"),
    ],
)
def test_any_other_move_is_refused_naming_both_states(moves: list[str], refused: str) -> None:
    report = draft()
    report.submit(at=AT)
    for move in moves:
        report.review(move, reviewed_by="rev", at=AT)
    with pytest.raises(InvalidTransition) as error:
        report.review(refused, reviewed_by="rev", at=AT)
    assert error.value.details == {"from": report.status, "to": refused}


def test_a_draft_cannot_be_reviewed() -> None:
    with pytest.raises(InvalidTransition):
        draft().review("Triaged", reviewed_by="rev", at=AT)


def test_a_hand_over_nobody_received_lands_in_the_inbox() -> None:
    report = draft("bug", "crash")
    report.submit(at=AT)
    report.record_delivery(at=AT, status_code=503, error="HTTP 503", final=False)
    assert report.status == "HandedOver"
    report.record_delivery(at=AT, status_code=None, error="ConnectError", final=True)
    assert report.status == "New"
    assert events(report)[-3:] == [
        "HandOverDeliveryAttempted",
        "HandOverDeliveryAttempted",
        "HandOverDeliveryFailed",
    ]


def test_a_delivered_hand_over_stays_with_engineering() -> None:
    report = draft("bug", "crash")
    report.submit(at=AT)
    report.record_delivery(at=AT, status_code=200, error=None, final=True)
    assert report.status == "HandedOver"
    assert events(report)[-1] == "HandOverDeliveryAttempted"
