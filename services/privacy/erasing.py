"""Erasure and access, as the HTTP route and the CLI both carry them out.

Erasure (decisions D43): the person's artifacts found while their keys still open their
events, their stored API keys and roles revoked (decisions D146), the keys destroyed and
``person-erased`` recorded (one command), those artifacts deleted, then every read model
rebuilt and swapped in, so that live read models hold what a rebuild from the log now gives:
the person's words and name as erased, counts unchanged. An event of theirs whose sealed box
fails authentication does not stop the erasure (its key is destroyed all the same) but
refuses an export, which would be incomplete (decisions D145).
"""

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import asyncpg

from contracts.artifact_refs import SCHEME
from contracts.errors import Unreadable
from contracts.privacy import ErasePerson
from services.bus.audit import forget_actor
from services.bus.command_bus import CommandBus
from services.bus.issued import Issued
from services.edge.auth import ApiKeyEntry
from services.privacy.handlers import require_admin
from services.privacy.holdings import Holdings, artifact_refs, person_events
from services.privacy.revoking import revoke_access, warn_of_configured
from services.store.artifacts import delete_artifacts
from services.store.event_store import EventStore

Progress = Callable[[int, int], None]


async def erase(
    store: EventStore, bus: CommandBus, pool: asyncpg.Pool, issued: Issued,
    rebuild: Callable[[], Awaitable[Any]] | None, configured: Iterable[ApiKeyEntry] = (),
) -> dict[str, Any]:  # fmt: skip
    """``configured``: the keys of the settings, of which those naming the person are said
    in the log (the service cannot revoke them, decisions D146)."""
    command = issued.command
    assert isinstance(command, ErasePerson)
    require_admin(issued.roles)  # before reading anything of the person
    held = await asyncio.to_thread(person_events, store, issued.tenant_id, command.person)
    # Before the keys go: a role's revocation seals its holder under their key (D130).
    await revoke_access(bus, issued, command.person, held.events)
    warn_of_configured(configured, issued.tenant_id, command.person)
    outcome = await bus.execute(
        replace(issued, command=command.model_copy(update={"aggregates": held.aggregates}))
    )
    # The audit trail names who issued each command: the person's rows are made anonymous,
    # this process's pending rows written first so none escapes.
    await bus.flush_audit()
    await forget_actor(
        pool, issued.tenant_id, command.person, f"erased:{outcome.result['erasureId'][:12]}"
    )
    refs = held.artifact_refs()
    await delete_artifacts(pool, issued.tenant_id, refs)
    if rebuild is not None:
        await rebuild()
    events = len(held.events) + len(held.unopened)
    return {**outcome.result, "events": events, "artifactsDeleted": len(refs),
            "position": outcome.position}  # fmt: skip


async def export(
    store: EventStore, pool: asyncpg.Pool, tenant_id: str, person: str, roles: frozenset[str],
    progress: Progress | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Everything held about the person in this tenant, as JSON (decisions D46)."""
    require_admin(roles)
    held = await asyncio.to_thread(person_events, store, tenant_id, person, progress)
    refuse_incomplete(held)
    artifacts = []
    for ref in artifact_refs(held.events):
        row = await pool.fetchrow(
            "SELECT media_type, content FROM artifacts WHERE tenant_id = $1 AND sha256 = $2",
            tenant_id, ref.lower().removeprefix(SCHEME),
        )  # fmt: skip
        if row is not None:
            content = bytes(row["content"])
            try:
                text: str | None = content.decode()
            except UnicodeDecodeError:
                text = None
            artifacts.append({"ref": ref, "mediaType": row["media_type"], "text": text,
                              "bytes": len(content)})  # fmt: skip
    return {
        "tenantId": tenant_id, "person": person,
        "exportedAt": datetime.now(UTC).isoformat(),
        "events": held.events, "artifacts": artifacts,
    }  # fmt: skip


def refuse_incomplete(held: Holdings) -> None:
    """An export lacking an event the person has would pass for all that is held: refused,
    naming the incident as ``/readyz`` does and where it is (decisions D145)."""
    if not held.unopened:
        return
    first = held.unopened[0]
    more = f" (and {len(held.unopened) - 1} more)" if len(held.unopened) > 1 else ""
    raise Unreadable(
        f"cannot export everything held: {first.reason}{more}; an incident of sealed boxes "
        "(see /readyz and `feedbackloop parked list`): restore the event from a backup",
        incident="sealed boxes",
        unopened=[{"aggregateId": str(u.aggregate_id), "version": u.version}
                  for u in held.unopened[:5]],
    )  # fmt: skip
