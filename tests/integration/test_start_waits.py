"""A process that finds PostgreSQL out of connections at start ("too many clients") waits
for one, saying so in its log and on its metrics, instead of exiting
(services/processes/waiting.py)."""

import asyncio
import logging
import os
import subprocess

import asyncpg
import pytest
from prometheus_client import REGISTRY

from services.processes import roles
from services.processes.bootstrap import Runtime
from tests.conftest import Keys, settings_for
from tests.servers import ROOT, local_postgres, local_processes

WAITING = ("feedbackloop_start_waiting", {"dependency": "postgresql"})


async def test_a_process_out_of_connections_at_start_waits_for_one_then_starts(
    own_postgres: local_postgres.PostgresServer, keys: Keys, caplog: pytest.LogCaptureFixture
) -> None:
    admin = await asyncpg.connect(own_postgres.url)
    try:
        # A role PostgreSQL refuses every connection to, as a full server does (53300).
        await admin.execute("CREATE ROLE app LOGIN CONNECTION LIMIT 0")
        await admin.execute("CREATE DATABASE app OWNER app")
        url = f"postgresql://app@127.0.0.1:{own_postgres.port}/app"
        caplog.set_level(logging.INFO, logger="feedbackloop")
        opening = asyncio.create_task(Runtime.open(settings_for(url, keys), roles.RELAY, wait=True))
        async with asyncio.timeout(60):
            while "TooManyConnectionsError" not in caplog.text:
                assert not opening.done(), opening
                await asyncio.sleep(0.05)
        assert f"waiting for PostgreSQL at 127.0.0.1:{own_postgres.port}/app" in caplog.text
        assert REGISTRY.get_sample_value(*WAITING) == 1

        await admin.execute("ALTER ROLE app CONNECTION LIMIT -1")
        runtime = await asyncio.wait_for(opening, 90)
    finally:
        await admin.close()
    try:
        assert await runtime.pool.fetchval("SELECT current_user") == "app"
        assert REGISTRY.get_sample_value(*WAITING) == 0
        assert "connected" in caplog.text
    finally:
        await runtime.close()


async def test_an_operators_command_does_not_wait_for_postgresql(keys: Keys) -> None:
    """``feedbackloop status`` and the like say at once that PostgreSQL cannot be reached."""
    unreachable = f"postgresql://postgres@127.0.0.1:{local_processes.free_port()}/postgres"
    with pytest.raises(ConnectionRefusedError):
        await Runtime.open(settings_for(unreachable, keys), roles.OPERATOR)
    for command in (["status"], ["parked", "list"]):
        said = await asyncio.to_thread(
            subprocess.run,
            [str(ROOT / ".venv" / "bin" / "feedbackloop"), *command],
            cwd=ROOT, env={**os.environ, "DATABASE_URL": unreachable},
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert said.returncode == 2, said.stdout + said.stderr
        assert "cannot be reached: ConnectionRefusedError" in said.stderr
        assert "Traceback" not in said.stderr


async def test_start_waiting_is_1_until_the_first_attempt_has_connected(
    database_url: str, keys: Keys
) -> None:
    """A metrics port served before the wait reads 0 only once the process is connected:
    during a first attempt that has not failed yet (here: behind another process's creation
    of the tables) it reads 1, so that 0 can say a process came up."""
    ddl = "hashtext('feedbackloop-ddl')"
    admin = await asyncpg.connect(database_url)
    try:
        await admin.execute(f"SELECT pg_advisory_lock({ddl})")
        opening = asyncio.create_task(
            Runtime.open(settings_for(database_url, keys), roles.RELAY, wait=True)
        )
        async with asyncio.timeout(60):  # the first attempt waits for the lock
            while not await admin.fetchval(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            ):
                assert not opening.done(), opening
                await asyncio.sleep(0.05)
        assert REGISTRY.get_sample_value(*WAITING) == 1
        await admin.execute(f"SELECT pg_advisory_unlock({ddl})")
        runtime = await asyncio.wait_for(opening, 60)
    finally:
        await admin.close()
    try:
        assert REGISTRY.get_sample_value(*WAITING) == 0
    finally:
        await runtime.close()
