"""Every process command follows one template (services/processes/lifetime.py): a process of
readers with nothing to run here exits 2 once its runtime is closed, and one that runs stops
on SIGTERM, closing what it began, with exit 0."""

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def environment(database_url: str) -> dict[str, str]:
    env = {**os.environ, "DATABASE_URL": database_url, "FEEDBACKLOOP_METRICS_PORT": "0"}
    for name in ("KAFKA_BOOTSTRAP_SERVERS", "FEEDBACKLOOP_HANDOVER_WEBHOOK_URL"):
        env.pop(name, None)
    return env


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("relay", "relay: off (no KAFKA_BOOTSTRAP_SERVERS)"),
        ("inbound", "inbound: off (no KAFKA_BOOTSTRAP_SERVERS)"),
    ],
)
async def test_a_process_with_nothing_to_run_here_says_why_and_exits_2(
    database_url: str, command: str, said: str
) -> None:
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "services.processes.cli", command],
        cwd=ROOT, env=environment(database_url), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert said in done.stderr
    assert "Traceback" not in done.stderr


async def test_a_process_of_readers_stops_on_sigterm_with_exit_0(database_url: str) -> None:
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "services.processes.cli", "projector", "--only", "inbox"),
        cwd=ROOT,
        env=environment(database_url),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        async with asyncio.timeout(60):  # until its reader has heartbeated: it runs
            while not await heartbeated(database_url, "rm_inbox"):
                assert process.returncode is None, "the projector stopped by itself"
                await asyncio.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(30):
            output, _ = await process.communicate()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, output.decode()
    assert b"Traceback" not in output


async def test_the_handover_process_without_its_webhook_still_runs_the_agents_webhooks(
    database_url: str,
) -> None:
    """Agents' webhooks are the tenants' own (D190): with no hand-over webhook configured the
    process says so and still delivers them, so it runs until signalled rather than exit 2."""
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "services.processes.cli", "handover"),
        cwd=ROOT,
        env=environment(database_url),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    assert process.stdout is not None
    said: list[str] = []
    try:
        async with asyncio.timeout(60):
            while "agent-webhooks: following" not in "".join(said):
                line = await process.stdout.readline()
                assert line, "the handover process stopped by itself:\n" + "".join(said)
                said.append(line.decode())
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(30):
            rest, _ = await process.communicate()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    output = "".join(said) + rest.decode()
    assert process.returncode == 0, output
    assert "hand-over webhook: none configured" in output
    assert "Traceback" not in output


async def heartbeated(database_url: str, reader: str) -> bool:
    conn = await asyncpg.connect(database_url)
    try:
        return bool(
            await conn.fetchval(
                "SELECT 1 FROM heartbeats WHERE reader = $1",
                reader,
            )
        )
    except asyncpg.UndefinedTableError:
        return False  # the process has not created its tables yet
    finally:
        await conn.close()
