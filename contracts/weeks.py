"""ISO weeks as the digests name them (SPEC §3.9): ``YYYY-Www``, Monday 00:00 UTC to the next
Monday 00:00 UTC, due at the following Monday 06:00 UTC. Public language: the digests context
builds a week's digest, the scheduler orders it when it falls due, and a ``Week`` path or field
(``contracts.scalars.Week``) names one.

Weeks are named, never searched: the previous twelve are spelled from the week itself (W130),
across year ends and the years with a week 53.
"""

import re
from datetime import UTC, date, datetime, timedelta

DUE_AFTER = timedelta(days=7, hours=6)  # from the week's Monday 00:00 to the next Monday 06:00
WEEK = re.compile(r"([0-9]{4})-W([0-9]{2})")  # ASCII digits: ``\d`` takes every script's


def week_of(moment: datetime) -> str:
    """The ISO week ``moment`` (aware, any zone) falls in, read in UTC."""
    year, week, _ = moment.astimezone(UTC).isocalendar()
    return f"{year:04d}-W{week:02d}"


def start_of(week: str) -> datetime:
    """Monday 00:00 UTC of ``week``; a name that is no ISO week is a ValueError."""
    found = WEEK.fullmatch(week)
    if found is None:
        raise ValueError(f"{week!r} is not an ISO week (YYYY-Www)")
    year, number = int(found[1]), int(found[2])
    try:
        monday = date.fromisocalendar(year, number, 1)
    except ValueError:
        raise ValueError(f"{year} has no ISO week {number}") from None
    return datetime(monday.year, monday.month, monday.day, tzinfo=UTC)


def end_of(week: str) -> datetime:
    """The next Monday 00:00 UTC: the window is ``start_of(week) <= t < end_of(week)``."""
    return start_of(week) + timedelta(days=7)


def due_at(week: str) -> datetime:
    """When the digest of ``week`` is due: the Monday after it, 06:00 UTC (W106)."""
    return start_of(week) + DUE_AFTER


def previous(week: str, count: int = 1) -> list[str]:
    """The ``count`` weeks before ``week``, nearest first."""
    start = start_of(week)
    return [week_of(start - timedelta(days=7 * n)) for n in range(1, count + 1)]


def last_completed(now: datetime) -> str:
    """The last ISO week that has ended at ``now``."""
    return week_of(now - timedelta(days=7))
