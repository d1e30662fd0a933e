"""The ReportClaim aggregate: who reviews one report now (decisions D162, D163).

One per (tenant, report), whichever queue offered the report, so a report is never held by
two reviewers through two queues. Its version is what makes "exactly one wins": two claims
decided on the same version append at the same place, the store takes one and the bus
decides the other again, which then finds the report held and is refused (409).

    Opened ──► Claimed(by, until) ──► Released ──► Claimed … (or Claimed again once expired)

A claim's expiry is no event: it is ``expires_at``, computed when the claim is taken from
its time and the queue's claim minutes, and compared with the time of whoever asks next (a
command's ``at``, a read's clock). Nothing has to run for a claim to expire.
"""

from datetime import datetime, timedelta
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from contracts.errors import Conflict, InvalidTransition, NotPermitted
from services.store.fast_uuid5 import uuid5_in
from services.store.sealing import Personal

CLAIM_NAMESPACE = UUID("8a1e2f3d-4c5b-5d6e-8f70-81a2b3c4d5e6")
claim_uuid5 = uuid5_in(CLAIM_NAMESPACE)


def claim_id(tenant_id: str, report_id: UUID) -> UUID:
    return claim_uuid5(f"{tenant_id}/{report_id}")


class ReportClaim(Aggregate):
    class Opened(Aggregate.Created):
        tenant_id: str
        report_id: UUID

    # The reviewer's id under their own key (D130): erasing them erases who held what.
    class Claimed(Aggregate.Event):
        personal = Personal(names={"claimed_by": "Reviewer"})

        tenant_id: str
        queue: str
        claimed_by: str
        expires_at: datetime

    class Released(Aggregate.Event):
        personal = Personal(names={"released_by": "Reviewer", "holder": "Reviewer"})

        tenant_id: str
        holder: str
        released_by: str

    def __init__(self, tenant_id: str, report_id: UUID) -> None:
        self.tenant_id = tenant_id
        self.report_id = report_id
        self.queue: str | None = None
        self.holder: str | None = None
        self.claimed_at: datetime | None = None
        self.expires_at: datetime | None = None

    @classmethod
    def open(cls, tenant_id: str, report_id: UUID, *, at: datetime) -> "ReportClaim":
        return cls._create(
            cls.Opened,
            id=claim_id(tenant_id, report_id),
            timestamp=at,
            tenant_id=tenant_id,
            report_id=report_id,
        )

    def held_by(self, at: datetime) -> str | None:
        """Who holds the report at ``at``: nobody once released or past its expiry."""
        if self.holder is None or self.expires_at is None or at >= self.expires_at:
            return None
        return self.holder

    def claim(self, queue: str, *, by: str, at: datetime, minutes: int) -> None:
        """Take the report for ``minutes`` (D162). Held by another: refused, naming until
        when (D163). Held by the same reviewer: the claim is taken again from now, which
        extends it (a reviewer still at work renews by claiming again)."""
        holder = self.held_by(at)
        if holder is not None and holder != by:
            raise Conflict(
                f"report {self.report_id} is claimed by someone else until "
                f"{self.expires_at.isoformat() if self.expires_at else '?'}",
                reportId=str(self.report_id),
                claimedBy=holder,
                expiresAt=self.expires_at.isoformat() if self.expires_at else None,
            )
        self._claim(
            tenant_id=self.tenant_id, queue=queue, claimed_by=by,
            expires_at=at + timedelta(minutes=minutes), timestamp=at,
        )  # fmt: skip

    @event(Claimed)
    def _claim(
        self, tenant_id: str, queue: str, claimed_by: str, expires_at: datetime, timestamp: datetime
    ) -> None:
        self.queue = queue
        self.holder = claimed_by
        self.claimed_at = timestamp
        self.expires_at = expires_at

    def release(self, *, by: str, at: datetime, for_anyone: bool) -> None:
        """Give the report back (D162): its holder does; ``for_anyone`` (a PlatformAdmin,
        D161) frees another's. Nothing held: refused, as there is nothing to give back."""
        holder = self.held_by(at)
        if holder is None:
            raise InvalidTransition(
                f"report {self.report_id} is not claimed", reportId=str(self.report_id)
            )
        if holder != by and not for_anyone:
            raise NotPermitted(
                "only its holder (or a PlatformAdmin) releases a claim", field="claim"
            )
        self._release(tenant_id=self.tenant_id, holder=holder, released_by=by, timestamp=at)

    @event(Released)
    def _release(self, tenant_id: str, holder: str, released_by: str, timestamp: datetime) -> None:
        self.holder = None
        self.expires_at = None
