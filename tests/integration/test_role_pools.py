"""Each role's pools are sized for what it runs (services/processes/roles.py), not for
everything."""

import asyncio
import uuid

import asyncpg
import pytest

from services.followers.follower import Follower
from services.followers.waiting import wait_for_position
from services.processes import roles
from services.processes.bootstrap import Runtime
from tests.conftest import Keys, settings_for
from tests.integration.test_follower import Recorder, tallies


@pytest.mark.parametrize("role", [roles.API, roles.PROJECTOR, roles.RELAY, roles.SERVE])
async def test_a_process_opens_its_pools_to_its_roles_budget(
    database_url: str, keys: Keys, role: roles.Role
) -> None:
    runtime = await Runtime.open(settings_for(database_url, keys), role)
    try:
        assert runtime.pool.get_max_size() == role.pool_size
        library = runtime.store.recorder.datastore.pool  # type: ignore[attr-defined]
        assert library.max_size == role.library
        assert library.min_size == role.library_kept_open
        bus = runtime.loop_store._pool
        assert bus.get_max_size() == max(role.bus, 1)
        assert bus.get_min_size() == 0  # opened on first use: a projector never does
    finally:
        await runtime.close()


async def test_more_read_your_writes_waits_than_the_api_pool_has_connections_all_complete(
    database_url: str, keys: Keys
) -> None:
    """Twice as many ``minPosition`` waits as the API role's pool has connections, all waiting
    at once, each see the read model reach their position once it catches up: a waiter holds
    one connection, never a second one while it holds the first (services/followers/follower.py)."""
    runtime = await Runtime.open(settings_for(database_url, keys), roles.API)
    # the reader follows on a pool of its own: only the waiters share the API's
    reader_pool = await asyncpg.create_pool(runtime.database_url, min_size=1, max_size=2)
    try:
        reader = Recorder(f"rm_test_{uuid.uuid4().hex[:6]}", transactional=True)
        tallies(runtime, 2, ticks=1)
        head = await asyncio.to_thread(runtime.store.recorder.max_notification_id) or 0
        waits = [
            asyncio.create_task(wait_for_position(runtime.pool, reader.name, head, timeout=20))
            for _ in range(2 * roles.API.pool_size)
        ]
        async with asyncio.timeout(30):  # every connection held by a waiter
            while runtime.pool.get_size() < roles.API.pool_size or runtime.pool.get_idle_size():
                await asyncio.sleep(0.05)
        stop = asyncio.Event()
        following = asyncio.create_task(
            Follower(runtime.store, reader_pool, reader, idle_poll=0.1).run(stop)
        )
        try:
            reached = await asyncio.gather(*waits)
        finally:
            stop.set()
            await following
        assert all(position >= head for position in reached), (reached, head)
    finally:
        await reader_pool.close()
        await runtime.close()
