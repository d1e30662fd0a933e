"""When the scheduler's orders fall due: pure functions of the clock, tested with given times.

Nights fall due at ``night_hour`` UTC of each date (SPEC §3.8), the proposals of each day at
``PROPOSAL_HOUR`` UTC (C42), and a week's digest the Monday 06:00 UTC after the week (§3.9).
A downtime's due times are caught up, within ``NIGHTS_KEPT`` days and ``WEEKS_KEPT`` weeks.
"""

import re
from datetime import UTC, date, datetime, time, timedelta

from contracts.weeks import due_at, last_completed, previous
from services.scheduling.orders import (
    AppraiseClosures,
    BuildDigest,
    ExpireOldText,
    Order,
    PlanNight,
    RaiseProposals,
)

NIGHTS_KEPT = 7  # after a longer downtime, only the last week's nights are caught up
WEEKS_KEPT = 52
PROPOSAL_HOUR = 6  # SPEC C42: the ProposalGenerator's cron is 0 6 * * *
RETENTION_HOUR = 3  # decisions D45: before the working day, after the night's heavy work
ORDER = re.compile(
    r"^(night/(?P<date>\d{4}-\d{2}-\d{2})|digest/(?P<week>\d{4}-W\d{2})"
    r"|proposals/(?P<day>\d{4}-\d{2}-\d{2})|retention/(?P<retained>\d{4}-\d{2}-\d{2})"
    r"|closures/(?P<hour>\d{4}-\d{2}-\d{2}T\d{2}))$"
)


def night_at(day: date, night_hour: int) -> datetime:
    return datetime.combine(day, time(night_hour), UTC)


def due_time(order: Order, night_hour: int) -> datetime:
    if isinstance(order, PlanNight):
        return night_at(order.date, night_hour)
    if isinstance(order, RaiseProposals):
        return night_at(order.date, PROPOSAL_HOUR)
    if isinstance(order, ExpireOldText):
        return night_at(order.date, RETENTION_HOUR)
    if isinstance(order, AppraiseClosures):
        return order.hour
    return due_at(order.week)


def daily(since: datetime, now: datetime, hour: int) -> list[date]:
    """The days whose ``hour`` UTC fell after ``since`` and at or before ``now`` — the last
    ``NIGHTS_KEPT`` of them — and today's again once it is due."""
    first, last = since.date(), now.date()
    days = [first + timedelta(days=n) for n in range((last - first).days + 1)]
    fallen = [day for day in days if night_at(day, hour) <= now][-NIGHTS_KEPT:]
    return [day for day in fallen if night_at(day, hour) > since or day == last]


def due(
    previous_tick: datetime | None,
    now: datetime,
    *,
    night_hour: int | None,
    proposal_hour: int | None = None,
    retention_hour: int | None = None,
    closures: bool = False,
) -> list[Order]:
    """The orders a tick hands over, in the order they fell due: the nights (``night_hour``
    UTC of each date, SPEC §3.8) and the weeks' digests (the Monday 06:00 UTC after the week,
    §3.9) that fell due after ``previous_tick`` and at or before ``now`` — a downtime's, caught
    up — and, at every tick, the latest of each kind again. Due means due *and not yet
    recorded* (§3.8, W106): a night switched on today still runs today and nothing missed is
    lost, while the runner and the builder find a recorded one done and do nothing.
    ``night_hour`` None: nights are off (W80). The proposals of each day (``proposal_hour``
    UTC, C42) fall due the same way as nights; None: no generator here. So does each day's
    expiry of old text (``retention_hour`` UTC, decisions D45); None: no retention here.
    ``closures``: the closed tasks waiting are appraised at every tick, named by its hour
    (SPEC M45) — a downtime has nothing to catch up, the next tick appraises all waiting."""
    now = now.astimezone(UTC)
    since = (previous_tick or now).astimezone(UTC)
    orders: list[Order] = []
    if night_hour is not None:
        orders += [PlanNight(day, now) for day in daily(since, now, night_hour)]
    if proposal_hour is not None:
        orders += [RaiseProposals(day, now) for day in daily(since, now, proposal_hour)]
    if retention_hour is not None:
        orders += [ExpireOldText(day, now) for day in daily(since, now, retention_hour)]
    if closures:
        orders.append(AppraiseClosures(now.replace(minute=0, second=0, microsecond=0), now))
    latest = last_completed(now)
    if due_at(latest) > now:  # a Monday before 06:00: the week just ended is not due yet
        latest = previous(latest)[0]
    weeks = [*reversed(previous(latest, WEEKS_KEPT - 1)), latest]
    orders += [BuildDigest(w, now) for w in weeks if due_at(w) > since or w == latest]
    return sorted(orders, key=lambda order: due_time(order, night_hour or 0))


def parse_order(text: str, now: datetime) -> Order:
    """``night/2026-11-29``, ``digest/2026-W48``, ``proposals/2026-11-30``,
    ``retention/2026-11-30`` or ``closures/2026-11-30T14``, as ``--order`` takes them."""
    found = ORDER.match(text)
    if found is None:
        raise ValueError(
            f"{text!r} is neither night/YYYY-MM-DD, digest/YYYY-Www, proposals/YYYY-MM-DD "
            "retention/YYYY-MM-DD nor closures/YYYY-MM-DDTHH"
        )
    if found["hour"]:
        hour = datetime.strptime(found["hour"], "%Y-%m-%dT%H").replace(tzinfo=UTC)
        return AppraiseClosures(hour, now)
    if found["retained"]:
        return ExpireOldText(date.fromisoformat(found["retained"]), now)
    if found["date"]:
        return PlanNight(date.fromisoformat(found["date"]), now)
    if found["day"]:
        return RaiseProposals(date.fromisoformat(found["day"]), now)
    due_at(found["week"])  # refuses a week the year does not have
    return BuildDigest(found["week"], now)


def too_old(order: Order, now: datetime) -> bool:
    """Past what a downtime is caught up for (a week of nights and days, a year of weeks):
    a unit failing that long is no longer retried."""
    if isinstance(order, BuildDigest):
        return due_at(order.week) < now - timedelta(weeks=WEEKS_KEPT)
    return order.date < now.date() - timedelta(days=NIGHTS_KEPT)
