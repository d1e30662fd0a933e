"""The scheduler's order that appraises closed tasks with no caller (SPEC M45, decisions
D39): due at every tick, named by its hour, parsed back from that name by hand."""

from datetime import UTC, datetime

import pytest

from services.scheduling.due import due, due_time, parse_order
from services.scheduling.orders import AppraiseClosures

pytestmark = pytest.mark.unit


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def closures(previous: str | None, now: str, *, on: bool = True) -> list[AppraiseClosures]:
    orders = due(previous and at(previous), at(now), night_hour=None, closures=on)
    return [order for order in orders if isinstance(order, AppraiseClosures)]


def test_every_tick_orders_the_waiting_closures_once_named_by_its_hour() -> None:
    (order,) = closures("2026-12-02T13:00:00", "2026-12-02T14:00:07")
    assert order.name == "closures/2026-12-02T14"
    assert order.now == at("2026-12-02T14:00:07")
    assert due_time(order, 0) == at("2026-12-02T14:00:00")


def test_a_downtime_orders_one_appraisal_of_all_that_waits_not_one_per_missed_hour() -> None:
    assert [o.name for o in closures("2026-11-30T02:00:00", "2026-12-02T14:00:00")] == [
        "closures/2026-12-02T14"
    ]


def test_without_an_appraiser_nothing_is_ordered() -> None:
    assert closures("2026-12-02T13:00:00", "2026-12-02T14:00:00", on=False) == []


def test_the_order_is_given_by_hand_under_its_name() -> None:
    now = at("2026-12-02T14:20:00")
    order = parse_order("closures/2026-12-02T09", now)
    assert order == AppraiseClosures(at("2026-12-02T09:00:00"), now)
    assert order.name == "closures/2026-12-02T09"
    with pytest.raises(ValueError, match="closures/YYYY-MM-DDTHH"):
        parse_order("closures/2026-12-02", now)
