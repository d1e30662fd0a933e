"""Fixtures of the integration tests beyond the shared servers."""

import asyncio
from collections.abc import AsyncIterator

import pytest

from tests import servers
from tests.integration.access_keys import access_runtime, admins  # noqa: F401  (fixtures)
from tests.servers import local_postgres


@pytest.fixture
async def own_postgres() -> AsyncIterator[local_postgres.PostgresServer]:
    """A PostgreSQL of the test's own, with default settings, to stop or to reconfigure
    (never the shared one); started and stopped off the event loop."""
    started = servers.own_postgres()
    server = await asyncio.to_thread(started.__enter__)
    try:
        yield server
    finally:
        await asyncio.to_thread(started.__exit__, None, None, None)
