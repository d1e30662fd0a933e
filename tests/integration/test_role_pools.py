"""Each role's pools are sized for what it runs (services/roles.py), not for everything."""

import pytest

from services import roles
from services.bootstrap import Runtime
from tests.conftest import Keys, settings_for


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
