"""SPEC W58: two runs are comparable only when ``ranBy`` agrees, and a night's run is not a
person's on demand (decisions D52, D53). The digest's health line and a case's pass-rate
history put like with like, and say whose each figure is."""

from typing import Any
from uuid import uuid4

from contracts.runners import RunnerKey, runner_of
from projections.eval_cases import pass_rate_history
from services.digests.build import CaseFact, health, health_line

NIGHT_CAROL, NIGHT_DAN = RunnerKey("night", "carol"), RunnerKey("night", "dan")
ALICE, BOB = RunnerKey("manual", "alice"), RunnerKey("manual", "bob")


def case(verdicts: dict[RunnerKey, bool]) -> CaseFact:
    return CaseFact("_Evals/coach/1", "A/Agent/Coach", uuid4(), verdicts)


def test_a_run_of_a_night_is_the_night_s_and_any_other_a_person_s() -> None:
    """W58, W102: the night that ran it names the runner."""
    assert runner_of("2026-11-28") == "night"
    assert runner_of(None) == "manual"


def test_the_health_line_counts_each_runner_apart_and_the_headline_is_the_night_s() -> None:
    """W58, W120: a person's run on demand never moves the night's figure, nor another's."""
    cases = [
        case({NIGHT_CAROL: True, ALICE: False}),  # the night passed it; alice's try failed
        case({NIGHT_CAROL: False}),
        case({ALICE: True, BOB: True}),  # never run by a night
        case({}),
    ]
    figures = health(cases)
    assert (figures.with_run, figures.passed) == (2, 1)  # the night's: like with like
    assert [(r.runner, r.ran_by, r.with_run, r.passed) for r in figures.runners] == [
        ("night", None, 2, 1),
        ("manual", "someone (1)", 2, 1),
        ("manual", "someone (2)", 1, 1),
    ]
    assert health_line(figures) == (
        "Health (cases passed of those with a last run): the night: 1 of 2; "
        "someone (1) on demand: 1 of 2; someone (2) on demand: 1 of 1"
    )


def test_the_health_line_names_no_person() -> None:
    """Decisions D135: the digest is posted to GitHub and webhooks, beyond an erasure's reach:
    who ran a case on demand is ``someone``, each still with a figure of their own (W58)."""
    line = health_line(health([case({ALICE: True}), case({ALICE: False})]))
    assert "alice" not in line
    assert line == "Health (cases passed of those with a last run): someone on demand: 1 of 2"


def test_a_reconfirmed_case_counts_once_for_the_night_by_its_newest_night_run() -> None:
    """The night runs as the case's confirmer (W101): after a reconfirmation the case has a
    night run under each; the night's figure counts the case once, by the newest."""
    figures = health([case({NIGHT_CAROL: False, NIGHT_DAN: True})])  # oldest first
    assert (figures.with_run, figures.passed) == (1, 1)


def test_no_run_at_all_says_so() -> None:
    assert health_line(health([case({})])).endswith("no runs")


def run(ran_by: str, night: str | None, passed: bool, at: str) -> dict[str, Any]:
    return {
        "runId": str(uuid4()),
        "ranBy": ran_by,
        "runner": runner_of(night),
        "recordedAt": at,
        "summary": {"passed": passed, "correct_rate": 1.0 if passed else 0.0},
    }


def test_the_pass_rate_history_is_one_line_per_runner_never_mixed() -> None:
    """W58: alice's runs on demand and the night's (as alice, the confirmer) are two lines."""
    runs = [  # newest first, as a case lists them
        run("alice", None, False, "2026-11-29T10:00:00+00:00"),
        run("alice", "2026-11-28", True, "2026-11-28T02:00:00+00:00"),
        run("alice", "2026-11-27", True, "2026-11-27T02:00:00+00:00"),
        run("bob", None, True, "2026-11-26T10:00:00+00:00"),
    ]
    history = pass_rate_history(runs)
    assert [(h["runner"], h["ranBy"], h["runs"], h["passed"]) for h in history] == [
        ("manual", "alice", 1, 0),
        ("night", "alice", 2, 2),
        ("manual", "bob", 1, 1),
    ]
    assert history[1]["passRate"] == 1.0
    assert [p["recordedAt"][:10] for p in history[1]["points"]] == ["2026-11-28", "2026-11-27"]
