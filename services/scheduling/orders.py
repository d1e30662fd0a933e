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


Order = PlanNight | BuildDigest | RaiseProposals | ExpireOldText
