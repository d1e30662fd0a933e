"""When orders fall due, with given times (SPEC §3.8, §3.9, W79, W105, W106, W114).

The scheduler only turns time into orders; these pin which orders a tick hands over.
"""

from datetime import UTC, date, datetime

import pytest

from services.scheduling.due import NIGHTS_KEPT, due, parse_order
from services.scheduling.orders import BuildDigest, PlanNight


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def names(previous: str | None, now: str, night_hour: int | None = 1) -> list[str]:
    return [order.name for order in due(previous and at(previous), at(now), night_hour=night_hour)]


def nights_of(previous: str, now: str) -> list[str]:
    return [name for name in names(previous, now) if name.startswith("night/")]


def test_the_first_tick_orders_the_latest_due_of_each_kind_in_the_order_they_fell_due() -> None:
    # Wednesday 2 December 2026: the week 48 digest fell due Monday 06:00, the night at 01:00.
    assert names(None, "2026-12-02T10:00:00") == ["digest/2026-W48", "night/2026-12-02"]


def test_the_first_tick_before_the_start_hour_orders_no_night_of_today() -> None:
    assert names(None, "2026-12-02T00:30:00") == ["digest/2026-W48"]


def test_the_week_53_digest_is_due_monday_2027_01_04_at_06_00_utc_not_a_second_earlier() -> None:
    """2026 has an ISO week 53 (SPEC §3.9, W106). Every tick hands the latest due digest over
    again (due and not yet recorded): the builder finds it done."""
    assert names("2027-01-04T05:00:00", "2027-01-04T05:59:59", None) == ["digest/2026-W52"]
    assert names("2027-01-04T05:59:59", "2027-01-04T06:00:00", None) == ["digest/2026-W53"]
    assert names("2027-01-04T06:00:00", "2027-01-04T07:00:00", None) == ["digest/2026-W53"]


def test_a_first_tick_early_on_monday_orders_the_week_before_last_not_the_one_just_ended() -> None:
    assert names(None, "2027-01-04T05:59:59", None) == ["digest/2026-W52"]
    assert names(None, "2027-01-04T06:00:00", None) == ["digest/2026-W53"]


def test_the_due_hour_itself_orders_the_night_and_every_tick_of_its_day_again() -> None:
    """SPEC §3.8: due when now.hour >= StartHourUtc and the night is not yet recorded, so a
    night switched on during the day still runs that day; the runner finds it done after."""
    assert nights_of("2026-11-29T00:30:00", "2026-11-29T00:59:59") == []
    assert nights_of("2026-11-29T00:59:59", "2026-11-29T01:00:00") == ["night/2026-11-29"]
    assert nights_of("2026-11-29T01:00:00", "2026-11-29T23:00:00") == ["night/2026-11-29"]
    assert nights_of("2026-11-29T23:00:00", "2026-11-30T00:59:59") == []  # the day is over


def test_a_downtime_spanning_two_digest_due_times_orders_both_in_order_each_once() -> None:
    """W114: a missed week is caught up at the next activation."""
    assert names("2026-11-23T05:00:00", "2026-12-01T12:00:00", None) == [
        "digest/2026-W47",
        "digest/2026-W48",
    ]


def test_nights_and_digests_interleave_by_when_they_fell_due() -> None:
    assert names("2026-11-29T12:00:00", "2026-12-01T12:00:00") == [
        "night/2026-11-30",
        "digest/2026-W48",
        "night/2026-12-01",
    ]


def test_a_long_downtime_catches_up_only_the_last_week_of_nights() -> None:
    orders = due(at("2026-10-01T12:00:00"), at("2026-12-01T12:00:00"), night_hour=1)
    nights = [order for order in orders if isinstance(order, PlanNight)]
    assert len(nights) == NIGHTS_KEPT
    assert nights[-1].date == date(2026, 12, 1)
    digests = [order.week for order in orders if isinstance(order, BuildDigest)]
    assert (digests[0], digests[-1]) == ("2026-W40", "2026-W48")
    assert len(digests) == len(set(digests)) == 9


def test_with_nights_off_only_digests_are_ordered() -> None:
    """W80: off by default on every instance."""
    assert names(None, "2026-12-02T10:00:00", None) == ["digest/2026-W48"]


def test_every_order_carries_the_tick_s_now() -> None:
    now = at("2026-12-02T10:00:00")
    assert {order.now for order in due(None, now, night_hour=1)} == {now}


def test_an_order_given_by_hand_is_parsed_or_refused_by_name() -> None:
    now = at("2026-12-02T10:00:00")
    assert parse_order("night/2026-11-29", now) == PlanNight(date(2026, 11, 29), now)
    assert parse_order("digest/2026-W53", now) == BuildDigest("2026-W53", now)
    with pytest.raises(ValueError, match="has no ISO week 53"):
        parse_order("digest/2025-W53", now)
    with pytest.raises(ValueError, match="neither"):
        parse_order("nightly/2026-11-29", now)
