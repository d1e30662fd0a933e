"""The Kafka door's own refusals in the audit (decisions D110): a message whose sender is
refused by the role rules while it is read (it names a ``role`` its source does not hold,
D27) never reaches the bus, so the bus writes no row of it; this writes its one row, as the
HTTP door does for a 403 it decides. What the bus refuses has its row from the bus; a
message refused for its shape (a dead letter naming a field) decided nothing, as a 422."""

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from contracts.errors import DomainError, NotPermitted
from services.bus.asking import Asking, Caller
from services.bus.audit import AuditTrail
from services.kafka.inbound.fast_cloudevent_reading import read_cloudevent
from services.kafka.inbound.parsing import attributes
from services.permissions.doors import KAFKA
from services.permissions.sources import SourceRoles

DOOR = KAFKA.name


def refused_sender(record: Any, error: DomainError, sources: SourceRoles) -> Asking | None:
    """The audit's view of a message refused by a role rule while read, or None for any
    other refusal. Read again from the record: a refusal is rare, the hot path stays as is."""
    if not isinstance(error, NotPermitted):
        return None
    headers = {key: bytes(header) for key, header in record.headers or ()}
    values, _, _ = read_cloudevent(record.value, record.key, headers)
    envelope = attributes(values)
    held = sources.of(envelope.source)  # what it holds, not the role it named
    caller = Caller(envelope.tenantid, envelope.actor or envelope.source, held, service=True)
    return Asking(DOOR, envelope.type, caller, refusal=error.code)


def audit_refused(
    audit: AuditTrail | None,
    refused: Iterable[tuple[Any, DomainError]],
    sources: SourceRoles,
    at: datetime,
) -> None:
    if audit is None:
        return
    for record, error in refused:
        if (asked := refused_sender(record, error, sources)) is not None:
            audit.refused(asked, at)
