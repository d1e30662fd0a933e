"""What the scheduler orders: plain commands with time as an argument.

The scheduler only turns wall-clock time into these; the nightly runner and the weekly digest
decide with the ``now`` they are given, so every edge is tested with a given time. Each order
names a thing with a deterministic id (``night/2026-11-29``, ``digest/2026-W48``): a second
scheduler, replica or restart that orders it again creates nothing.
"""

from dataclasses import dataclass
from datetime import date, datetime


@dataclass(frozen=True)
class PlanNight:
    """Plan (once) and run the night of ``date`` (the UTC date), for every tenant; SPEC §3.8."""

    date: date
    now: datetime

    @property
    def name(self) -> str:
        return f"night/{self.date.isoformat()}"


@dataclass(frozen=True)
class BuildDigest:
    """Build (once) the digest of ISO week ``week`` (``YYYY-Www``), for every tenant; §3.9."""

    week: str
    now: datetime

    @property
    def name(self) -> str:
        return f"digest/{self.week}"


@dataclass(frozen=True)
class RaiseProposals:
    """Cluster the evidence and raise the proposals it supports, for every tenant (SPEC C42:
    daily at 06:00 UTC); proposals are idempotent on target + evidence hash (C43)."""

    date: date
    now: datetime

    @property
    def name(self) -> str:
        return f"proposals/{self.date.isoformat()}"


@dataclass(frozen=True)
class ExpireOldText:
    """Erase, for every tenant with a retention period, report and comment text older than
    it (decisions D45): daily at ``RETENTION_HOUR`` UTC; erasing what is erased already
    destroys nothing more."""

    date: date
    now: datetime

    @property
    def name(self) -> str:
        return f"retention/{self.date.isoformat()}"


@dataclass(frozen=True)
class AppraiseClosures:
    """Appraise, for every tenant, the closed-task transitions noted and not yet appraised
    (SPEC M45): at every tick, named by its hour; each transition is appraised once whatever
    orders it again (the closure aggregate decides once, decisions D39)."""

    hour: datetime  # the UTC hour of the tick, on the hour
    now: datetime

    @property
    def date(self) -> date:
        return self.hour.date()

    @property
    def name(self) -> str:
        return f"closures/{self.hour.strftime('%Y-%m-%dT%H')}"


Order = PlanNight | BuildDigest | RaiseProposals | ExpireOldText | AppraiseClosures
