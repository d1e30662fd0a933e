"""A command as it reaches the bus: the command itself and what the entry point stamped on it."""

from dataclasses import dataclass, replace
from datetime import datetime

from eventsourcing.persistence import Tracking
from pydantic import BaseModel

from services.observing.tracing import explicit_traceparent


@dataclass(frozen=True)
class Issued:
    """A command as it reaches the bus: whose, when, under which command id."""

    command: BaseModel
    tenant_id: str
    actor: str
    command_id: str
    at: datetime
    tracking: Tracking | None = None
    # Applied at most once under it (a CloudEvent's ``source`` + ``id``, or an Idempotency-Key):
    # see ``services.bus.receipts``.
    identity: str | None = None
    # W3C traceparent; by default the caller's (services/observing/tracing.py).
    trace: str | None = None
    # The bus found no aggregate under the id this command creates (``Creates``): the handler
    # need not look it up. A lookup per command would be a round trip per command.
    new: bool = False
    service: bool = False  # the actor is a service, not a person (a service's API key)
    # The caller's roles in the tenant (contracts.roles), stamped by every door (HTTP, Kafka),
    # possibly none; None only on the service's own work (scheduler, readers), which no role
    # rule applies to (services.permissions.rules).
    roles: frozenset[str] | None = None
    # What the command says (a hash), kept in its receipt: the same identity with another
    # digest is another request under a reused Idempotency-Key, refused (SPEC C11).
    digest: str | None = None
    # The door it came in by (services.bus.asking: "http", "console", "kafka", "cli", …), as
    # the audit names it; None for the service's own work outside any door.
    door: str | None = None


def traced(issued: Issued) -> Issued:
    """The command with the trace its body names, where it names one (D261)."""
    trace = explicit_traceparent(issued.command, issued.trace)
    return issued if trace == issued.trace else replace(issued, trace=trace)
