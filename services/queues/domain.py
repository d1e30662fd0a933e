"""The ReviewQueue aggregate: one named filter over a tenant's Inbox (decisions D160).

    (none) ──define──► Defined ──define──► Changed … ──remove──► Removed ──define──► Changed

What a definition says is what the queue holds afterwards; a definition that changes nothing
records nothing. A removed queue offers nothing and takes no claim; defining it again brings
it back. Claims are not the queue's: a report is claimed once, whichever queue offered it
(``services.queues.claims``).
"""

from datetime import datetime
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from services.store.fast_uuid5 import uuid5_in
from services.store.sealing import Personal

QUEUE_NAMESPACE = UUID("5d0b7c43-1f7e-5a86-9c2e-3e4f5a6b7c80")
queue_uuid5 = uuid5_in(QUEUE_NAMESPACE)


def queue_id(tenant_id: str, queue: str) -> UUID:
    """Derived from the tenant: another tenant's queue of the same name is another aggregate."""
    return queue_uuid5(f"{tenant_id}/{queue}")


class ReviewQueue(Aggregate):
    # Each reviewer's id and whoever wrote the queue, under that person's key (D130).
    class Defined(Aggregate.Created):
        personal = Personal(names={"reviewers": "Reviewer", "defined_by": "Reviewer"})

        tenant_id: str
        queue: str
        filter: dict[str, Any]
        reviewers: list[str]
        claim_minutes: int
        defined_by: str

    class Changed(Aggregate.Event):
        personal = Personal(names={"reviewers": "Reviewer", "changed_by": "Reviewer"})

        tenant_id: str
        filter: dict[str, Any]
        reviewers: list[str]
        claim_minutes: int
        changed_by: str

    class Removed(Aggregate.Event):
        personal = Personal(names={"removed_by": "Reviewer"})

        tenant_id: str
        removed_by: str

    def __init__(
        self,
        tenant_id: str,
        queue: str,
        filter: dict[str, Any],
        reviewers: list[str],
        claim_minutes: int,
        defined_by: str,
    ) -> None:
        self.tenant_id = tenant_id
        self.queue = queue
        self.filter = dict(filter)
        self.reviewers = list(reviewers)
        self.claim_minutes = claim_minutes
        self.removed = False

    @classmethod
    def define(
        cls,
        tenant_id: str,
        queue: str,
        filter: dict[str, Any],
        reviewers: list[str],
        claim_minutes: int,
        *,
        by: str,
        at: datetime,
    ) -> "ReviewQueue":
        return cls._create(
            cls.Defined,
            id=queue_id(tenant_id, queue),
            timestamp=at,
            tenant_id=tenant_id,
            queue=queue,
            filter=dict(filter),
            reviewers=list(dict.fromkeys(reviewers)),
            claim_minutes=claim_minutes,
            defined_by=by,
        )

    def redefine(
        self,
        filter: dict[str, Any],
        reviewers: list[str],
        claim_minutes: int,
        *,
        by: str,
        at: datetime,
    ) -> None:
        """What was said is what the queue holds; saying it again of a live queue is no
        change and records nothing (a repeated PUT)."""
        reviewers = list(dict.fromkeys(reviewers))
        same = (filter, sorted(reviewers), claim_minutes) == (
            self.filter,
            sorted(self.reviewers),
            self.claim_minutes,
        )
        if same and not self.removed:
            return
        self._change(
            tenant_id=self.tenant_id, filter=dict(filter), reviewers=reviewers,
            claim_minutes=claim_minutes, changed_by=by, timestamp=at,
        )  # fmt: skip

    @event(Changed)
    def _change(
        self,
        tenant_id: str,
        filter: dict[str, Any],
        reviewers: list[str],
        claim_minutes: int,
        changed_by: str,
        timestamp: datetime,
    ) -> None:
        self.filter = dict(filter)
        self.reviewers = list(reviewers)
        self.claim_minutes = claim_minutes
        self.removed = False

    def remove(self, *, by: str, at: datetime) -> bool:
        """Remove the queue; removing a removed queue records nothing (False)."""
        if self.removed:
            return False
        self._remove(tenant_id=self.tenant_id, removed_by=by, timestamp=at)
        return True

    @event(Removed)
    def _remove(self, tenant_id: str, removed_by: str, timestamp: datetime) -> None:
        self.removed = True

    def may_claim(self, person: str) -> bool:
        """Decisions D161: the queue's reviewers claim from it; a queue naming none is every
        Reviewer's (the bus has checked the Reviewer role already)."""
        return not self.reviewers or person in self.reviewers
