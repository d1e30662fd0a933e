"""Command handlers of the digest: load, decide, hand back for the bus to append.

A second builder of the same week loses the create (W109): the bus meets the library's
IntegrityError, reloads, and this handler then finds the digest and decides nothing.
"""

from contextlib import suppress
from dataclasses import dataclass
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError

from contracts.digests import BuildWeeklyDigest, PostWeeklyDigest, RecordDigestDelivery
from services.bus.decisions import Decision, Handler
from services.bus.issued import Issued
from services.digests.build import AppraisesReports
from services.digests.domain import Digest, digest_id_for
from services.store.event_store import EventStore
from services.store.owners import load_owned


@dataclass(frozen=True)
class DigestState:
    digest_id: UUID
    week: str
    created: bool  # False: the digest was there already (a second builder, a restart)
    posted: bool


def state(digest: Digest, created: bool) -> DigestState:
    return DigestState(digest.id, digest.week, created, digest.posted)


def created_by(issued: Issued) -> UUID:
    command = issued.command
    assert isinstance(command, BuildWeeklyDigest)
    return digest_id_for(issued.tenant_id, command.tables.week)


def build_weekly_digest(store: EventStore, issued: Issued) -> Decision:
    """Create the digest once, with the tables the builder computed (W109, W115)."""
    command = issued.command
    assert isinstance(command, BuildWeeklyDigest)
    digest_id = created_by(issued)
    if not issued.new:
        with suppress(AggregateNotFoundError):
            existing: Digest = store.repository.get(digest_id)
            return Decision([], state(existing, created=False))
    digest = Digest.build(
        digest_id=digest_id, tenant_id=issued.tenant_id, tables=command.tables, at=issued.at
    )
    return Decision([digest], state(digest, created=True))


def load_week(store: EventStore, tenant_id: str, week: str) -> Digest:
    """The tenant's digest of ``week``; another tenant's is as absent as a missing one."""
    digest: Digest = load_owned(store, tenant_id, digest_id_for(tenant_id, week), "digest")
    return digest


def post_weekly_digest(appraise: AppraisesReports) -> Handler:
    """Post once (W124): a digest already stamped decides nothing. Each agent's post closes
    with ``appraise``'s line."""

    def post(store: EventStore, issued: Issued) -> Decision:
        command = issued.command
        assert isinstance(command, PostWeeklyDigest)
        digest = load_week(store, issued.tenant_id, command.week)
        digest.post(
            instance=command.instance,
            url=command.url,
            routes=command.routes,
            at=issued.at,
            appraise=appraise,
        )
        return Decision([digest], state(digest, created=False))

    return post


def record_digest_delivery(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, RecordDigestDelivery)
    digest = load_week(store, issued.tenant_id, command.week)
    digest.record_delivery(
        agent_id=command.agent_id,
        status_code=command.status_code,
        error=command.error,
        final=command.final,
        at=issued.at,
    )
    return Decision([digest], state(digest, created=False))
