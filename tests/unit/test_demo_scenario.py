"""The demo's scenario as data (decisions D68): reports of every kind and category, every
person and agent named where the console shows them, and a `--help` that teaches."""

import pytest
from typer.testing import CliRunner

from contracts.report_kinds import Category, Kind
from contracts.reports import ComposeWrongAnswer
from services.processes.cli import app
from services.processes.demo.cast import AGENTS, PEOPLE
from services.processes.demo.scenario import STEPS, wrong_answer_facts
from services.processes.demo.texts import PLAIN_REPORTS, REVIEWS, WRONG_ANSWERS
from services.reports.wrong_answer import classify

pytestmark = pytest.mark.unit


def test_the_wrong_answers_cover_every_kind_as_the_check_decides_it() -> None:
    """SPEC W14, W15: the kind follows the evidence check, so the facts must lead there."""
    kinds = [
        classify(ComposeWrongAnswer.model_validate(wrong_answer_facts(r))) for r in WRONG_ANSWERS
    ]
    assert set(kinds) == {kind.value for kind in Kind}


def test_the_reports_cover_every_category() -> None:
    categories = {Kind(k).category for k in (r.kind or "not-found" for r in WRONG_ANSWERS)}
    categories |= {Category(p.category) for p in PLAIN_REPORTS}
    assert categories == set(Category)


def test_every_review_names_a_report_of_the_scenario() -> None:
    keys = {r.key for r in WRONG_ANSWERS} | {p.key for p in PLAIN_REPORTS}
    assert {review.key for review in REVIEWS} <= keys
    assert len(keys) == len(WRONG_ANSWERS) + len(PLAIN_REPORTS)  # a key names one report


def test_every_agent_has_a_maintainer_of_the_cast_and_a_lifted_case() -> None:
    subjects = {person.subject for person in PEOPLE}
    assert all(agent.maintainer.subject in subjects for agent in AGENTS)
    assert {r.agent for r in WRONG_ANSWERS if r.lift} == set(AGENTS)


def test_the_help_says_who_is_who_and_that_a_second_run_refuses() -> None:
    shown = CliRunner().invoke(app, ["demo", "--help"], terminal_width=200).output
    assert "sofia.brunner" in shown
    assert "refuses" in shown
    assert "make demo" in shown
    assert len(STEPS) == 11
