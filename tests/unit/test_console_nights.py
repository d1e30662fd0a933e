"""The Nights and Digests pages' pure parts: the addresses they take, the weeks the trend draws and
the sparkline's text alternative (decisions D83, D84; SPEC W116, W118)."""

import pytest

from contracts.errors import Refused
from services.console.pages.digests import trend_points, week_before, week_of
from services.console.pages.nights import day
from services.console.pages.sparkline import sparkline

COACH = {"agent": "Office/Coach", "trend": {"previous": 4, "change": -1}}


def test_the_week_before_the_first_week_of_a_year_is_the_last_of_the_year_before() -> None:
    assert week_before("2026-W01") == "2025-W52"
    assert week_before("2027-W01") == "2026-W53"
    assert week_before("2026-W48") == "2026-W47"


def test_an_agent_a_digest_does_not_name_had_no_report_that_week() -> None:
    totals = [
        ("2026-W46", {"Office/Coach": 2}),
        ("2026-W47", {}),
        ("2026-W48", {"Office/Coach": 3}),
    ]
    assert trend_points(COACH, "2026-W48", totals) == [
        ("2026-W46", 2),
        ("2026-W47", 0),
        ("2026-W48", 3),
    ]


def test_the_week_before_without_a_digest_is_the_digests_own_trend() -> None:
    totals = [("2026-W40", {"Office/Coach": 7}), ("2026-W48", {"Office/Coach": 3})]
    assert trend_points(COACH, "2026-W48", totals) == [
        ("2026-W40", 7),
        ("2026-W47", 4),
        ("2026-W48", 3),
    ]


def test_no_more_than_twelve_weeks_are_drawn() -> None:
    weeks = [f"2026-W{n:02d}" for n in range(1, 21)]
    totals = [(week, {"Office/Coach": n}) for n, week in enumerate(weeks)]
    points = trend_points(COACH, "2026-W20", totals)
    assert len(points) == 12
    assert points[-1] == ("2026-W20", 19)


def test_the_sparkline_is_an_image_named_by_every_figure() -> None:
    drawn = str(sparkline([("2026-W47", 4), ("2026-W48", 3)], "Reports a week of <Coach>"))
    assert drawn.startswith('<svg class="sparkline" role="img"')
    assert 'aria-label="Reports a week of &lt;Coach&gt;: 2026-W47 4, 2026-W48 3"' in drawn
    assert "<title>Reports a week of &lt;Coach&gt;: 2026-W47 4, 2026-W48 3</title>" in drawn
    assert drawn.count("<polyline") == 1


def test_a_line_of_zeros_stays_inside_the_picture() -> None:
    drawn = str(sparkline([("2026-W47", 0), ("2026-W48", 0)], "none"))
    assert 'points="4.0,26.0 116.0,26.0"' in drawn


@pytest.mark.parametrize("week", ["2026-W54", "2025-W53", "2026-W00", "26-W01", "2026-W1"])
def test_a_week_the_calendar_does_not_have_is_refused_naming_the_field(week: str) -> None:
    with pytest.raises(Refused) as refused:
        week_of(week)
    assert refused.value.field == "week"


@pytest.mark.parametrize("date", ["2026-02-30", "20261031", "2026-W44-6", "2026-10-31T00"])
def test_a_night_has_one_address_and_a_day_the_calendar_lacks_is_refused(date: str) -> None:
    with pytest.raises(Refused) as refused:
        day(date)
    assert refused.value.field == "date"
    assert day("2026-10-31") == "2026-10-31"
