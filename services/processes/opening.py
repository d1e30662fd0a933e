"""Opening a process's connections: PostgreSQL (embedded when none is configured), the event
store, the tables every process needs, the command bus, and the API keys."""

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import asyncpg

from contracts.roles import ROLES
from projections.read_model import schema_of
from services.bus.audit import AuditTrail
from services.bus.audit import ensure_table as ensure_audit_table
from services.bus.command_bus import CommandBus
from services.console.sessions import ensure_session_key
from services.declaration import registry
from services.edge.auth import EVERY_ROLE, SCOPES, ApiKeyEntry, KeyRing, new_key
from services.edge.positions import ensure_position_key
from services.followers.tables import ensure_tables as ensure_follower_tables
from services.kafka.inbound import ensure_inbound_tables
from services.processes.contexts import CONTEXTS, read_models
from services.processes.roles import Role
from services.processes.settings import Settings
from services.projecting.live import ensure_schema
from services.scheduling.scheduler import ensure_tables as ensure_scheduler_tables
from services.store.artifacts import ensure_table as ensure_artifacts_table
from services.store.event_store import EventStore
from services.store.fast_loop_store import LoopStore
from services.store.opening import open_store


@dataclass(frozen=True)
class Opened:
    """What one successful attempt opened."""

    store: EventStore
    pool: asyncpg.Pool
    loop_store: LoopStore
    bus: CommandBus
    position_key: bytes
    session_key: bytes  # seals the console's session cookies


async def open_parts(settings: Settings, role: Role, database_url: str) -> Opened:
    """One attempt: every pool it opened is closed again when it fails part-way."""
    opened: list[Callable[[], Awaitable[None]]] = []
    try:
        pool = await asyncpg.create_pool(database_url, min_size=1, max_size=role.pool_size)
        opened.append(pool.close)
        async with pool.acquire() as conn:
            # Every process may start at once on an empty database: the library's tables and
            # ours are created by one process at a time (DDL races on the catalogue's unique
            # indexes otherwise).
            await conn.execute("SELECT pg_advisory_lock(hashtext('feedbackloop-ddl'))")
            try:
                store = await asyncio.to_thread(
                    open_store,
                    database_url,
                    settings.master_key_ring,
                    POSTGRES_POOL_SIZE=str(role.library_kept_open),
                    POSTGRES_MAX_OVERFLOW=str(role.library - role.library_kept_open),
                )
                opened.append(lambda: asyncio.to_thread(store.close))
                await ensure_follower_tables(conn)
                await ensure_inbound_tables(conn)
                await ensure_artifacts_table(conn)
                await ensure_scheduler_tables(conn)
                await ensure_audit_table(conn)
                position_key = await ensure_position_key(conn)
                session_key = await ensure_session_key(conn)
            finally:
                await conn.execute("SELECT pg_advisory_unlock(hashtext('feedbackloop-ddl'))")
        for projection in read_models():  # queries never meet a missing table
            await ensure_schema(pool, projection, schema_of(projection))
        loop_store = await LoopStore.open(database_url, store, size=max(role.bus, 1))
    except BaseException:
        for close in reversed(opened):
            with contextlib.suppress(Exception):
                await close()
        raise
    commands = registry(CONTEXTS)
    bus = CommandBus(
        store,
        commands.handlers,
        max_batch=settings.bus_max_batch,
        creates=commands.creates,
        replays=commands.replays,
        loop_store=loop_store,
        alone=commands.alone,
        audit=AuditTrail(pool),
    )
    return Opened(store, pool, loop_store, bus, position_key, session_key)


def load_keys(settings: Settings) -> tuple[KeyRing, str | None]:
    """Configured keys; on the embedded default with none configured, a development key."""
    keys = KeyRing.load(settings.api_keys, settings.api_keys_file)
    if len(keys) or not settings.embedded:
        return keys, None
    path = settings.data_dir / "dev-api-key.json"
    if not path.exists():
        key, entry = new_key("dev", "developer", list(SCOPES), roles=EVERY_ROLE)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"key": key, "entry": entry}))
        path.chmod(0o600)
    saved = json.loads(path.read_text())
    # The developer's key holds every role too (a key saved before roles existed gains them):
    # on the embedded default one person is every role, the PlatformAdmin who issues the rest.
    developer = ApiKeyEntry.model_validate({**saved["entry"], "roles": list(ROLES)})
    return KeyRing([developer]), str(saved["key"])
