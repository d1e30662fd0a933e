"""The lift: from a submitted answer report to an eval case's definition (SPEC W44–W51, §3.5)."""

from datetime import UTC, datetime
from typing import Any
from uuid import uuid4

import pytest

from contracts.errors import NotPermitted, Refused
from contracts.labelled_block import parse
from contracts.reports import ComposeWrongAnswer, DraftReport
from services.evals.domain import EvalCase, agent_id, case_ref
from services.evals.lift import lift
from services.evals.scoring import correct, invented
from services.reports.domain import Report
from services.reports.wrong_answer import compose_report
from tests.unit.test_wrong_answer import SEED_BLOCK, SEED_FACTS

AT = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
PROMPT = "Welchen Stundenansatz verrechne ich für ein Konzept?"


def wrong_answer_report(submit: bool = True, **overrides: Any) -> Report:
    facts = ComposeWrongAnswer.model_validate(
        {**SEED_FACTS, "prompt": PROMPT, "context": ["sglauser/AgenticOffice"], **overrides}
    )
    block, draft = compose_report(facts)
    report = Report.draft(
        draft, report_id=uuid4(), tenant_id="t", reporter="rita", at=AT, command_id="c",
        facts=block, prompt=facts.prompt, context=list(facts.context),
    )  # fmt: skip
    if submit:
        report.submit(at=AT)
    return report


def test_the_lift_fills_every_field_from_the_labelled_block() -> None:
    """SPEC W48: agent, prompt, context, mustGround, mustAssert; no model pinned (§3.5)."""
    definition = lift(wrong_answer_report())
    assert definition.agent == "AgenticOffice/Agent/OfficeCoach"
    assert definition.prompt == PROMPT
    assert definition.context == ["sglauser/AgenticOffice"]
    assert definition.must_ground == ["sglauser/AgenticOffice/Firmenprofil"]
    assert definition.must_assert == "Konzept-Ansatz CHF 150 steht im Firmenprofil"
    assert definition.must_not_assert == []  # not-found asserts nothing invented
    assert definition.model is None


def test_a_fabricated_answers_value_becomes_must_not_assert_never_must_assert() -> None:
    """SPEC W50: an invented value is never the expected one."""
    reply = {**SEED_FACTS["reply"], "text": "Der Konzept-Ansatz ist CHF 180 pro Stunde."}
    tool = {"name": "Get", "arguments": "sglauser/AgenticOffice/Firmenprofil", "result": "ok"}
    reply["toolCalls"] = [tool]
    definition = lift(wrong_answer_report(kind="fabricated", reply=reply))
    assert definition.must_not_assert == ["180"]
    assert definition.must_assert == "Konzept-Ansatz CHF 150 steht im Firmenprofil"
    # When the expected value is the invented one, it is dropped.
    same = lift(wrong_answer_report(kind="fabricated", reply=reply, expected="CHF 180"))
    assert same.must_not_assert == ["180"]
    assert same.must_assert is None


def test_must_assert_is_the_expected_value_without_its_typed_quotes() -> None:
    """SPEC §3.4 (amended), §3.5: mustAssert is the stored Expected value, stripped of the pair
    of quotes the reporter typed, so check 3 can pass; for a composed report and for free text."""
    composed = lift(wrong_answer_report(expected="«Konzept-Ansatz CHF 150»"))
    text = SEED_BLOCK.replace('"Konzept-Ansatz CHF 150 steht im Firmenprofil"', "„CHF 150.–“")
    free = Report.draft(
        DraftReport(category="answer", message="wrong", extra_context=text),
        report_id=uuid4(), tenant_id="t", reporter="rita", at=AT, command_id="c",
        facts=parse(text), prompt=PROMPT,
    )  # fmt: skip
    free.submit(at=AT)
    assert composed.must_assert == "Konzept-Ansatz CHF 150"
    assert lift(free).must_assert == "CHF 150.–"
    reply = "Der Konzept-Ansatz CHF 150 steht im Firmenprofil, also CHF 150.00 pro Stunde."
    assert correct(reply, composed.must_assert)
    assert correct(reply, lift(free).must_assert)


def test_an_invented_phone_number_beside_a_date_becomes_its_own_must_not_assert() -> None:
    """SPEC §3.6 (amended), §3.5: the number and the date in parentheses are two values, so a
    reply that repeats the invented number is caught."""
    reply = {**SEED_FACTS["reply"], "text": "Ruf +41 44 123 45 67 (2026-03-01) an."}
    reply["toolCalls"] = [
        {"name": "Get", "arguments": "sglauser/AgenticOffice/Firmenprofil", "result": "ok"}
    ]
    definition = lift(wrong_answer_report(kind="fabricated", reply=reply))
    assert definition.must_not_assert == ["+41 44 123 45 67", "2026-03-01"]
    assert invented("Die Nummer ist 044 123 45 67.", definition.must_not_assert)


def test_a_plain_bug_report_is_refused() -> None:
    """SPEC W49."""
    report = Report.draft(
        DraftReport(category="bug", message="crash"), report_id=uuid4(), tenant_id="t",
        reporter="rita", at=AT, command_id="c", facts=None,
    )  # fmt: skip
    report.submit(at=AT)
    with pytest.raises(Refused, match="labelled block"):
        lift(report)


def test_a_draft_is_refused() -> None:
    with pytest.raises(Refused, match="draft"):
        lift(wrong_answer_report(submit=False))


def test_a_retrieval_report_is_a_bug_and_is_refused() -> None:
    reply = {**SEED_FACTS["reply"], "toolCalls": [
        {"name": "Get", "arguments": "sglauser/AgenticOffice/Firmenprofil", "result": "500"}
    ]}  # fmt: skip
    with pytest.raises(Refused, match="only answer reports"):
        lift(wrong_answer_report(reply=reply))


def test_a_case_is_created_with_only_its_source_under_the_agents_evals() -> None:
    """SPEC W42–W44, W47."""
    case_id, source = uuid4(), uuid4()
    case = EvalCase.create(
        case_id=case_id, tenant_id="t", source=source,
        agent_path="Agent/ExecutiveAssistant", at=AT,
    )  # fmt: skip
    (created,) = case.collect_events()
    assert created.source == str(source)
    assert not hasattr(created, "prompt")
    assert case.ref == f"_Evals/Agent_ExecutiveAssistant/{case_id}"
    assert agent_id("Agent/ExecutiveAssistant") == "Agent_ExecutiveAssistant"
    assert case_ref("A/B/C", case_id).startswith("_Evals/A_B_C/")


def test_confirming_stamps_the_caller_and_unconfirming_clears_it() -> None:
    """SPEC W74, W75."""
    case = EvalCase.create(case_id=uuid4(), tenant_id="t", source=uuid4(), agent_path="A", at=AT)
    case.confirm(True, by="carla", by_service=False, at=AT)
    assert case.confirmed_by == "carla"
    case.confirm(False, by="dave", by_service=False, at=AT)
    assert case.confirmed_by is None


def test_a_service_cannot_confirm_a_case_but_may_unconfirm_it() -> None:
    """SPEC W74, W76: only a person confirms; the night runs as them."""
    case = EvalCase.create(case_id=uuid4(), tenant_id="t", source=uuid4(), agent_path="A", at=AT)
    with pytest.raises(NotPermitted) as refused:
        case.confirm(True, by="svc-nightly", by_service=True, at=AT)
    assert refused.value.field == "confirmedBy"
    assert case.confirmed_by is None
    case.confirm(True, by="carla", by_service=False, at=AT)
    case.confirm(False, by="svc-nightly", by_service=True, at=AT)
    assert case.confirmed_by is None
