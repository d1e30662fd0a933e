"""Command handlers of review queues: load, decide, hand back for the bus to append.

A report is the reports context's; a claim reads what was decided of it from the log (its
aggregate, loaded by id for the tenant, as ``load_owned`` loads any), never that context's
modules: the claim needs only whether the report waits for a reviewer.
"""

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError

from contracts.errors import InvalidTransition, NotFound, NotPermitted
from contracts.queues import (
    ClaimNext,
    ClaimReport,
    DefineQueueCommand,
    QueueShown,
    ReleaseClaim,
    RemoveQueue,
)
from services.bus.decisions import Decision
from services.bus.issued import Issued
from services.permissions.rules import ADMIN, holds
from services.queues.claims import ReportClaim, claim_id
from services.queues.domain import ReviewQueue, queue_id
from services.store.event_store import EventStore
from services.store.owners import load_owned

OPEN = ("New", "Triaged")  # what waits for a reviewer (SPEC W32)


@dataclass(frozen=True)
class ClaimState:
    report_id: UUID
    queue: str
    claimed_by: str
    claimed_at: datetime
    expires_at: datetime


def found_queue(store: EventStore, tenant_id: str, queue: str) -> ReviewQueue | None:
    try:
        found: ReviewQueue = store.repository.get(queue_id(tenant_id, queue))
    except AggregateNotFoundError:
        return None
    return found


def live_queue(store: EventStore, tenant_id: str, queue: str) -> ReviewQueue:
    found = found_queue(store, tenant_id, queue)
    if found is None or found.removed:
        raise NotFound(f"no queue {queue!r}", field="queue")
    return found


def shown(found: ReviewQueue) -> QueueShown:
    return QueueShown(
        queue=found.queue,
        filter=found.filter,
        reviewers=list(found.reviewers),
        claim_minutes=found.claim_minutes,
    )


def define_queue(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, DefineQueueCommand)
    said = command.definition
    filter = said.filter.model_dump(by_alias=True, exclude_none=True)
    found = found_queue(store, issued.tenant_id, command.queue)
    if found is None:
        found = ReviewQueue.define(
            issued.tenant_id, command.queue, filter, list(said.reviewers), said.claim_minutes,
            by=issued.actor, at=issued.at,
        )  # fmt: skip
    else:
        found.redefine(
            filter, list(said.reviewers), said.claim_minutes, by=issued.actor, at=issued.at
        )
    return Decision([found], shown(found))


def defined_now(store: EventStore, issued: Issued) -> QueueShown:
    """A definition repeated under its Idempotency-Key answers the queue as it is now."""
    command = issued.command
    assert isinstance(command, DefineQueueCommand)
    return shown(live_queue(store, issued.tenant_id, command.queue))


def remove_queue(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, RemoveQueue)
    found = live_queue(store, issued.tenant_id, command.queue)
    found.remove(by=issued.actor, at=issued.at)
    return Decision([found], command.queue)


def waiting_report(store: EventStore, tenant_id: str, report_id: UUID) -> None:
    """The report exists in the tenant (another tenant's answers as a made-up id does) and
    waits for a reviewer: a draft, a hand-over or a closed report is nobody's to claim."""
    report = load_owned(store, tenant_id, report_id, "report")
    status = getattr(report, "status", None)
    if status == "Draft":
        raise NotFound(f"no report {report_id}", reportId=str(report_id))
    if status not in OPEN:
        raise InvalidTransition(
            f"report {report_id} is {status}: it waits for no reviewer", reportId=str(report_id)
        )


def claim_of(store: EventStore, issued: Issued, report_id: UUID) -> ReportClaim:
    try:
        found: ReportClaim = store.repository.get(claim_id(issued.tenant_id, report_id))
    except AggregateNotFoundError:
        return ReportClaim.open(issued.tenant_id, report_id, at=issued.at)
    return found


def reviewer_of(queue: ReviewQueue, issued: Issued) -> None:
    if not queue.may_claim(issued.actor):
        raise NotPermitted(
            f"queue {queue.queue!r} is claimed from by its reviewers only", field="queue"
        )


def claimed(claim: ReportClaim) -> ClaimState:
    assert claim.holder is not None
    assert claim.queue is not None
    assert claim.claimed_at is not None
    assert claim.expires_at is not None
    return ClaimState(
        claim.report_id, claim.queue, claim.holder, claim.claimed_at, claim.expires_at
    )


def claim_report(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, ClaimReport)
    queue = live_queue(store, issued.tenant_id, command.queue)
    reviewer_of(queue, issued)
    waiting_report(store, issued.tenant_id, command.report_id)
    claim = claim_of(store, issued, command.report_id)
    claim.claim(queue.queue, by=issued.actor, at=issued.at, minutes=queue.claim_minutes)
    return Decision([claim], claimed(claim))


def claim_next(store: EventStore, issued: Issued) -> Decision:
    """The first candidate nobody holds, in the order the read model offered them (oldest
    waiting first). A candidate held meanwhile, or closed since the read model saw it, is
    passed over; none left: 404, nothing is recorded."""
    command = issued.command
    assert isinstance(command, ClaimNext)
    queue = live_queue(store, issued.tenant_id, command.queue)
    reviewer_of(queue, issued)
    for report_id in command.candidates:
        claim = claim_of(store, issued, report_id)
        if claim.held_by(issued.at) is not None:
            continue
        try:
            waiting_report(store, issued.tenant_id, report_id)
        except (NotFound, InvalidTransition):
            continue
        claim.claim(queue.queue, by=issued.actor, at=issued.at, minutes=queue.claim_minutes)
        return Decision([claim], claimed(claim))
    raise NotFound(f"no unclaimed report waits in queue {queue.queue!r}", field="queue")


def release_claim(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, ReleaseClaim)
    try:
        claim: ReportClaim = store.repository.get(claim_id(issued.tenant_id, command.report_id))
    except AggregateNotFoundError:
        raise InvalidTransition(
            f"report {command.report_id} is not claimed", reportId=str(command.report_id)
        ) from None
    # Decisions D161: a PlatformAdmin frees a claim a reviewer left behind.
    claim.release(by=issued.actor, at=issued.at, for_anyone=holds(issued.roles, ADMIN))
    return Decision([claim], command.report_id)
