"""Command handlers of appraisal: load, decide, hand back for the bus to append."""

from dataclasses import dataclass

from eventsourcing.application import AggregateNotFoundError

from contracts.appraisal import WriteCharter
from services.appraisal.charter import parse_charter
from services.appraisal.domain import TenantCharter, charter_id_for, refuse_service
from services.bus.decisions import Decision
from services.bus.issued import Issued
from services.store.event_store import EventStore


@dataclass(frozen=True)
class CharterWritten:
    lines: int
    findings: tuple[str, ...]


def write_charter(store: EventStore, issued: Issued) -> Decision:
    """Refuse a service before reading its document; parse once (Refused names the line)."""
    command = issued.command
    assert isinstance(command, WriteCharter)
    refuse_service(issued.service)
    charter = parse_charter(command.document)
    written = CharterWritten(len(charter.lines), charter.findings)
    try:
        current: TenantCharter = store.repository.get(charter_id_for(issued.tenant_id))
    except AggregateNotFoundError:
        adopted = TenantCharter.adopt(
            charter,
            tenant_id=issued.tenant_id,
            document=command.document,
            by=issued.actor,
            by_service=issued.service,
            at=issued.at,
        )
        return Decision([adopted], written)
    current.amend(
        charter, document=command.document, by=issued.actor, by_service=issued.service,
        at=issued.at,
    )  # fmt: skip
    return Decision([current], written)


def written_again(_store: EventStore, issued: Issued) -> CharterWritten:
    """What a write repeated under its Idempotency-Key answers: the same document (its
    digest says so) parses to the same lines and findings, and nothing is written again."""
    command = issued.command
    assert isinstance(command, WriteCharter)
    charter = parse_charter(command.document)
    return CharterWritten(len(charter.lines), charter.findings)
