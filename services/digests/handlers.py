"""Command handlers of the digest: load, decide, hand back for the bus to append.

A second builder of the same week loses the create (W109): the bus meets the library's
IntegrityError, reloads, and this handler then finds the digest and decides nothing.
"""

from contextlib import suppress
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError

from contracts.digests import BuildWeeklyDigest, PostWeeklyDigest, RecordDigestDelivery
from contracts.errors import Refused
from contracts.intake import RecordTriage
from services.bus.decisions import Decision, Handler
from services.bus.issued import Issued
from services.digests.build import AppraisesReports
from services.digests.domain import Digest, digest_id_for
from services.digests.triage import TriageItem, triage_id
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


def triage_created_by(issued: Issued) -> UUID:
    command = issued.command
    assert isinstance(command, RecordTriage)
    return triage_id(issued.tenant_id, command.item_id)


def record_triage(store: EventStore, issued: Issued) -> Decision:
    """Take one weekly item in, once (decisions D64): an item taken in already decides
    nothing, so a replay, a restart or a retried record changes nothing."""
    command = issued.command
    assert isinstance(command, RecordTriage)
    item_id = triage_created_by(issued)
    if not issued.new:
        with suppress(AggregateNotFoundError):
            existing: TriageItem = store.repository.get(item_id)
            return Decision([], existing.item_id)
    said: dict[str, Any] = {
        "tenant_id": issued.tenant_id, "item_id": command.item_id, "week": command.week,
        "agent": command.agent, "agent_id": command.agent_id, "at": issued.at,
    }  # fmt: skip
    if command.outcome == "filed" and command.repository and command.issue_url:
        item = TriageItem.filed(**said, repository=command.repository, issue_url=command.issue_url)
    elif command.outcome == "commented" and command.issue_url and command.comment_url:
        item = TriageItem.commented(
            **said, repository=command.repository, issue_url=command.issue_url,
            comment_url=command.comment_url,
        )  # fmt: skip
    elif command.outcome == "unrouted" and command.finding:
        item = TriageItem.unrouted(**said, finding=command.finding)
    else:
        raise Refused(f"a {command.outcome} item names what it is about", field="outcome")
    return Decision([item], item.item_id)
