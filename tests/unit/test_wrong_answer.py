"""Composing a wrong-answer report from the facts a chat client holds (SPEC W04–W18, §3.3)."""

from typing import Any

import pytest

from contracts.labelled_block import parse
from contracts.reports import ComposeWrongAnswer
from services.reports.wrong_answer import classify, compose_report

# The seed's example, as the facts a chat client holds.
SEED_FACTS: dict[str, Any] = {
    "thread": "sglauser/_Thread/2026-09-18-1319",
    "messageRef": "sglauser/_Thread/2026-09-18-1319/a7f3",
    "reply": {
        "agentName": "AgenticOffice/Agent/OfficeCoach",
        "modelName": "claude-sonnet-4-5",
        "harness": "native",
        "toolCalls": [{"name": "Get", "arguments": "AgenticOffice/01-Willkommen", "result": "ok"}],
        "text": "Ich weiss leider nicht, welchen Stundenansatz du verrechnest…",
    },
    "account": "The coach doesn't know my hourly rate, but it is in the company profile.",
    "expected": "Konzept-Ansatz CHF 150 steht im Firmenprofil",
    "evidence": {"node": "sglauser/AgenticOffice/Firmenprofil", "readable": True},
    "maintainers": ["the course's maintainers"],
}

SEED_BLOCK = """\
Kind: not-found
Thread: sglauser/_Thread/2026-09-18-1319
Message: sglauser/_Thread/2026-09-18-1319/a7f3
Agent: AgenticOffice/Agent/OfficeCoach
Model: claude-sonnet-4-5 (requested: same; harness: native)
Tools called: 1 — Get(AgenticOffice/01-Willkommen) → ok
Answer (excerpt): "Ich weiss leider nicht, welchen Stundenansatz du verrechnest…"
Expected: "Konzept-Ansatz CHF 150 steht im Firmenprofil"
Evidence: get sglauser/AgenticOffice/Firmenprofil → readable; no Search in toolCalls
Addressee: agent owner (AgenticOffice/Agent/OfficeCoach — the course's maintainers)"""


def facts(**overrides: Any) -> ComposeWrongAnswer:
    return ComposeWrongAnswer.model_validate({**SEED_FACTS, **overrides})


def test_the_seeds_facts_compose_the_seeds_labelled_block() -> None:
    """SPEC W05–W13: the labels in order, Model with requested/harness, tools with a count.
    The addressee's maintainers are the register's (decisions D25), given here as it holds."""
    block, draft = compose_report(facts(), registered=["the course's maintainers"])
    assert block.kind == "not-found"
    assert draft.extra_context == SEED_BLOCK
    assert draft.category == "answer"  # W20
    assert draft.message == SEED_FACTS["account"]  # W02: verbatim
    assert draft.side_panel is not None
    assert (draft.side_panel.thread, draft.side_panel.message) == (
        SEED_FACTS["thread"],
        SEED_FACTS["messageRef"],
    )  # W03


def test_the_model_line_names_the_requested_model_only_when_another_answered() -> None:
    """SPEC W07, W08."""
    reply = {**SEED_FACTS["reply"], "requestedModelName": "claude-opus-4"}
    _, draft = compose_report(facts(reply=reply))
    block = parse(draft.extra_context)
    assert block is not None
    assert block.model is not None
    assert (block.model.actual, block.model.requested) == ("claude-sonnet-4-5", "claude-opus-4")
    same = {**SEED_FACTS["reply"], "requestedModelName": "claude-sonnet-4-5"}
    _, draft = compose_report(facts(reply=same))
    assert "(requested: same;" in (draft.extra_context or "")


@pytest.mark.parametrize(
    ("overrides", "kind"),
    [
        # W14: the reporter cannot read the node, so neither could the agent: a grant.
        ({"evidence": {"node": "x/Profile", "readable": False}}, "no-access"),
        # The agent looked the node up and the platform failed: retrieval, a bug (W19).
        (
            {
                "evidence": {"node": "x/Profile", "readable": True},
                "reply": {
                    **SEED_FACTS["reply"],
                    "toolCalls": [
                        {"name": "Search", "arguments": "x/Profile", "result": "error: timeout"}
                    ],
                },
            },
            "retrieval",
        ),
        # Readable and looked up fine: the content was wrong, as the reporter says.
        (
            {
                "kind": "fabricated",
                "reply": {
                    **SEED_FACTS["reply"],
                    "toolCalls": [
                        {
                            "name": "Get",
                            "arguments": "sglauser/AgenticOffice/Firmenprofil",
                            "result": "ok",
                        }
                    ],
                },
            },
            "fabricated",
        ),
        # A tool that is not Get or Search never counts as looking (W59's rule, reused).
        (
            {
                "kind": "outdated",
                "reply": {
                    **SEED_FACTS["reply"],
                    "toolCalls": [
                        {
                            "name": "Summarise",
                            "arguments": "sglauser/AgenticOffice/Firmenprofil",
                            "result": "ok",
                        }
                    ],
                },
            },
            "not-found",
        ),
    ],
)
def test_the_kind_comes_from_the_check_not_from_what_the_reporter_believes(
    overrides: dict[str, Any], kind: str
) -> None:
    """SPEC W15."""
    assert classify(facts(**overrides)) == kind


def test_a_retrieval_report_is_filed_as_a_bug() -> None:
    """SPEC W19."""
    reply = {**SEED_FACTS["reply"], "toolCalls": [
        {"name": "Get", "arguments": "sglauser/AgenticOffice/Firmenprofil", "result": "500"}
    ]}  # fmt: skip
    block, draft = compose_report(facts(reply=reply))
    assert (block.kind, draft.category) == ("retrieval", "bug")


@pytest.mark.parametrize("typed", ["«Konzept-Ansatz CHF 150»", '"Konzept-Ansatz CHF 150"'])
def test_quotes_typed_around_the_expected_value_are_not_stored(typed: str) -> None:
    """SPEC §3.4 (amended): the structured record's expected value loses one pair of typed
    quotes at the door, as a free-text ``Expected:`` line does; the block's text reads back as
    the stored facts."""
    block, draft = compose_report(facts(expected=typed))
    assert block.expected == "Konzept-Ansatz CHF 150"
    assert draft.extra_context is not None
    assert 'Expected: "Konzept-Ansatz CHF 150"' in draft.extra_context.split("\n")
    assert parse(draft.extra_context) == block


def test_the_maintainers_a_reporter_types_are_not_the_addressee() -> None:
    """W13, decisions D25: only the register names an agent's maintainers; a report naming
    its own is addressed to the agent alone."""
    block, _ = compose_report(facts(maintainers=["mallory"]))
    assert "mallory" not in block.addressee
