"""Fixtures of the integration tests beyond the shared servers."""

import asyncio
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.servers import localservers


@pytest.fixture
async def own_postgres() -> AsyncIterator[localservers.PostgresServer]:
    """A PostgreSQL of the test's own, with default settings, to stop or to reconfigure
    (never the shared one)."""
    workdir = Path(tempfile.mkdtemp(prefix="fl-own-pg-"))
    server = await asyncio.to_thread(localservers.start_postgres, workdir, fast=True)
    try:
        yield server
    finally:
        await asyncio.to_thread(server.stop)
        shutil.rmtree(workdir, ignore_errors=True)
