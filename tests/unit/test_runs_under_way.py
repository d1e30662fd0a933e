"""Runs under way (decisions D80) and the pass-rate chart drawn from a case's history (D82)."""

import uuid
from datetime import UTC, datetime, timedelta

from services.console.pages.eval_chart import HEIGHT, PAD, pass_rate_chart
from services.evals.progress import RunsUnderWay, UnderWay

AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def run(case_id: uuid.UUID, minutes: int = 0) -> UnderWay:
    return UnderWay(uuid.uuid4(), case_id, "mia", 5, 0, AT + timedelta(minutes=minutes))


def test_a_run_is_under_way_from_its_start_to_its_end_with_its_count_of_conversations() -> None:
    under_way, case_id = RunsUnderWay(), uuid.uuid4()
    started = run(case_id)
    under_way.started("a", started)
    under_way.advanced("a", started.run_id, 2)
    assert [(r.run_id, r.done, r.conversations) for r in under_way.of_case("a", case_id)] == [
        (started.run_id, 2, 5)
    ]
    under_way.ended("a", started.run_id)
    assert under_way.of_case("a", case_id) == []


def test_another_tenants_run_of_the_same_case_id_is_never_shown() -> None:
    under_way, case_id = RunsUnderWay(), uuid.uuid4()
    under_way.started("b", run(case_id))
    assert under_way.of_case("a", case_id) == []


def test_the_runs_of_a_case_come_oldest_first_and_other_cases_are_left_out() -> None:
    under_way, case_id = RunsUnderWay(), uuid.uuid4()
    later, earlier = run(case_id, 5), run(case_id, 1)
    under_way.started("a", later)
    under_way.started("a", earlier)
    under_way.started("a", run(uuid.uuid4()))
    assert [r.run_id for r in under_way.of_case("a", case_id)] == [earlier.run_id, later.run_id]


def point(passed: bool, minute: int) -> dict[str, object]:
    at = (AT + timedelta(minutes=minute)).isoformat()
    return {"runId": str(uuid.uuid4()), "recordedAt": at, "passed": passed, "correctRate": None}


def test_the_chart_draws_each_runner_apart_with_its_pass_rate_so_far_oldest_first() -> None:
    # The read model's history: newest first, one line per runner (SPEC W58).
    manual = [point(True, 3), point(False, 2), point(True, 1)]
    nightly = [point(False, 9)]
    history = [
        {"runner": "manual", "ranBy": "mia", "runs": 3, "passed": 2, "passRate": 2 / 3,
         "points": manual},
        {"runner": "night", "ranBy": "mia", "runs": 1, "passed": 0, "passRate": 0.0,
         "points": nightly},
    ]  # fmt: skip
    first, second = pass_rate_chart(history)
    top, bottom = PAD, HEIGHT - PAD
    middle = bottom - (bottom - top) / 2
    # oldest first: passed (100 %), failed (50 %), passed (67 %)
    assert [dot.y for dot in first.dots] == [top, middle, round(bottom - (bottom - top) * 2 / 3, 1)]
    assert [dot.passed for dot in first.dots] == [True, False, True]
    assert first.summary == "manual runs by mia: 2 of 3 passed (67%); the latest passed"
    assert second.summary == "nightly runs by mia: 0 of 1 passed (0%); the latest failed"
    assert [dot.y for dot in second.dots] == [bottom]
    # One time axis: the nightly run, the newest of all four, is drawn rightmost.
    assert [dot.x for dot in first.dots] == sorted(dot.x for dot in first.dots)
    assert second.dots[0].x > first.dots[-1].x
