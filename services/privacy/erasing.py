"""Erasure and access, as the HTTP route and the CLI both carry them out.

Erasure (decisions D43): the person's artifacts found while their keys still open their
events, the keys destroyed and ``person-erased`` recorded (one command), those artifacts
deleted, then every read model rebuilt and swapped in, so that live read models hold what a
rebuild from the log now gives: the person's words and name as erased, counts unchanged.
"""

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import asyncpg

from contracts.artifact_refs import SCHEME
from contracts.privacy import ErasePerson
from services.bus.audit import forget_actor
from services.bus.command_bus import CommandBus
from services.bus.issued import Issued
from services.privacy.handlers import require_admin
from services.privacy.holdings import artifact_refs, person_events
from services.store.artifacts import delete_artifacts
from services.store.event_store import EventStore

Progress = Callable[[int, int], None]


async def erase(
    store: EventStore, bus: CommandBus, pool: asyncpg.Pool, issued: Issued,
    rebuild: Callable[[], Awaitable[Any]] | None,
) -> dict[str, Any]:  # fmt: skip
    command = issued.command
    assert isinstance(command, ErasePerson)
    require_admin(issued.roles)  # before reading anything of the person
    events = await asyncio.to_thread(person_events, store, issued.tenant_id, command.person)
    found = [UUID(event["aggregateId"]) for event in events]
    outcome = await bus.execute(
        replace(issued, command=command.model_copy(update={"aggregates": found}))
    )
    # The audit trail names who issued each command: the person's rows are made anonymous,
    # this process's pending rows written first so none escapes.
    await bus.flush_audit()
    await forget_actor(
        pool, issued.tenant_id, command.person, f"erased:{outcome.result['erasureId'][:12]}"
    )
    refs = artifact_refs(events)
    await delete_artifacts(pool, issued.tenant_id, refs)
    if rebuild is not None:
        await rebuild()
    return {**outcome.result, "events": len(events), "artifactsDeleted": len(refs),
            "position": outcome.position}  # fmt: skip


async def export(
    store: EventStore, pool: asyncpg.Pool, tenant_id: str, person: str, roles: frozenset[str],
    progress: Progress | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Everything held about the person in this tenant, as JSON (decisions D46)."""
    require_admin(roles)
    events = await asyncio.to_thread(person_events, store, tenant_id, person, progress)
    artifacts = []
    for ref in artifact_refs(events):
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
        "events": events, "artifacts": artifacts,
    }  # fmt: skip
