"""The privacy commands: destroy keys, then record what was destroyed.

Destroying the keys is the erasure itself and cannot be undone; the event records it. A
failure between the two leaves the keys destroyed and no event: the command is simply issued
again (it destroys nothing more and records the erasure).
"""

from contracts.privacy import ErasePerson, ExpireText
from services.bus.decisions import Decision
from services.bus.issued import Issued
from services.permissions.rules import ADMIN, require
from services.privacy.domain import Erasure, Expiry, erasure_id_for, expiry_id_for
from services.store.event_store import EventStore


def require_admin(roles: frozenset[str] | None) -> None:
    """SPEC C52: erasure and export are the platform admin's (decisions D43)."""
    require(roles, ADMIN, "erasing or exporting a person")


def erase_person(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, ErasePerson)
    require_admin(issued.roles)
    destroyed = store.data_keys.destroy_person(issued.tenant_id, command.person)
    erasure = Erasure.erase(
        erasure_id=erasure_id_for(issued.tenant_id, issued.command_id),
        tenant_id=issued.tenant_id, person=command.person, keys=destroyed,
        erased_by=issued.actor, aggregates=command.aggregates, at=issued.at,
    )  # fmt: skip
    return Decision([erasure], {"erasureId": str(erasure.id), "keysDestroyed": len(destroyed)})


def expire_text(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, ExpireText)
    destroyed = store.data_keys.destroy_scopes_before(issued.tenant_id, command.before)
    expiry = Expiry.expire(
        expiry_id=expiry_id_for(issued.tenant_id, issued.command_id), tenant_id=issued.tenant_id,
        before=command.before, keys=destroyed, at=issued.at,
    )  # fmt: skip
    if not destroyed:
        return Decision([], {"keysDestroyed": 0})  # nothing expired: nothing to record
    return Decision([expiry], {"keysDestroyed": len(destroyed)})
