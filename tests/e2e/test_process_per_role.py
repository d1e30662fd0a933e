"""The production wiring of docs/operations.md, one process per role, run as written:
``feedbackloop api``, ``projector``, ``relay``, ``inbound`` and ``scheduler``, each its own OS
process with metrics on — twice side by side (two stacks of one instance) on one PostgreSQL
with its default ``max_connections`` (100). Every process comes up and is ready, and the
connections they hold stay within the budget of docs/operations.md
(services/processes/roles.py).

The first stack takes every default, as the recipe there does (API on 8000, each role's own
metrics port); the second, on the same host, is given ports of its own.
"""

import asyncio
import contextlib
import os
import socket
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import httpx
import pytest

from services.processes import roles
from tests.servers import ROOT, local_processes, own_postgres

FEEDBACKLOOP = ROOT / ".venv" / "bin" / "feedbackloop"
ROLES = ("api", "projector", "relay", "inbound", "scheduler")
# `feedbackloop api` runs one worker per core, at most two by default
API_WORKERS = min(os.cpu_count() or 1, roles.API_DEFAULT_WORKERS)
DEFAULT_API_PORT = 8000
# Inherited settings the recipe does not set (a developer's shell, the tests' own).
UNSET = ("FEEDBACKLOOP_PORT", "FEEDBACKLOOP_METRICS_PORT", "FEEDBACKLOOP_HOST")
# 1 on a metrics port until the process has connected (services/processes/waiting.py)
CONNECTED = 'feedbackloop_start_waiting{dependency="postgresql"} 0.0'


@pytest.fixture
def default_postgres() -> Iterator[str]:
    """A PostgreSQL of the test's own with the default max_connections (the shared one has
    more)."""
    with own_postgres() as server:
        yield server.url


def free_ports(count: int) -> int:
    """The first of ``count`` consecutive loopback ports free a moment ago."""
    for _ in range(100):
        first = local_processes.free_port()
        with contextlib.ExitStack() as held:
            try:
                for port in range(first, first + count):
                    s = held.enter_context(socket.socket())
                    s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return first
    raise AssertionError(f"no {count} consecutive free ports")


@dataclass
class Process:
    role: str
    popen: subprocess.Popen[bytes]
    log: Path
    metrics: list[int]  # its metrics ports (the API's workers: one each)
    api: int | None = None


@dataclass
class Stack:
    name: str
    env: dict[str, str]
    logs: Path
    processes: list[Process] = field(default_factory=list)

    def start(self, role: str, *, api_port: int | None = None, metrics: int | None = None) -> None:
        env = dict(self.env)
        if api_port is not None:
            env["FEEDBACKLOOP_PORT"] = str(api_port)
        if metrics is not None:
            env["FEEDBACKLOOP_METRICS_PORT"] = str(metrics)
        first = metrics or roles.ROLES[role].metrics_port
        ports = list(range(first, first + (API_WORKERS if role == "api" else 1)))
        log = self.logs / f"{self.name}-{role}.log"
        with log.open("w") as out:
            popen = subprocess.Popen(
                [str(FEEDBACKLOOP), role], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
            )
        api = (api_port or DEFAULT_API_PORT) if role == "api" else None
        self.processes.append(Process(role, popen, log, ports, api))

    def stop(self) -> None:
        for process in self.processes:
            if process.popen.poll() is None:
                process.popen.terminate()
        for process in self.processes:
            try:
                process.popen.wait(30)
            except subprocess.TimeoutExpired:
                process.popen.kill()


def tail(stacks: list[Stack]) -> str:
    """Each process's log tail, the ones that exited first (a CI excerpt keeps the head)."""
    processes = sorted(
        (p for s in stacks for p in s.processes), key=lambda p: p.popen.poll() is None
    )
    return "\n".join(f"--- {p.log.name} ---\n{p.log.read_text()[-2500:]}" for p in processes)


async def ready(http: httpx.AsyncClient, process: Process) -> bool:
    """It has connected: every metrics port of it (served before it connects) says it no
    longer waits for PostgreSQL; and the API's /readyz says 200."""
    with contextlib.suppress(httpx.HTTPError):
        for port in process.metrics:
            answer = await http.get(f"http://127.0.0.1:{port}/metrics")
            if answer.status_code != 200 or CONNECTED not in answer.text.splitlines():
                return False
        if process.api is None:
            return True
        return (await http.get(f"http://127.0.0.1:{process.api}/readyz")).status_code == 200
    return False


async def status(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(
        subprocess.run,
        [str(FEEDBACKLOOP), "status"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@contextlib.asynccontextmanager
async def peak_connections(database_url: str) -> AsyncIterator[list[int]]:
    """The most client connections seen at once (besides this watcher's own) while inside."""
    watcher = await asyncpg.connect(database_url)
    peak = [0]

    async def watch() -> None:
        while True:
            count = await watcher.fetchval(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
            )
            peak[0] = max(peak[0], count)
            await asyncio.sleep(0.1)

    task = asyncio.create_task(watch())
    try:
        yield peak
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await watcher.close()


async def test_the_readme_recipe_twice_side_by_side_on_a_default_postgresql(
    default_postgres: str, kafka_bootstrap: str, tmp_path: Path
) -> None:
    prefix = f"stacks{uuid.uuid4().hex[:6]}."
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env |= {
        "DATABASE_URL": default_postgres,  # what `eval "$(ops/localservers.py … env)"` sets
        "KAFKA_BOOTSTRAP_SERVERS": kafka_bootstrap,
        # On a shared broker: topics and a consumer group of this test's own.
        "FEEDBACKLOOP_TOPIC_PREFIX": prefix,
        "FEEDBACKLOOP_INBOUND_GROUP_ID": f"{prefix}inbound",
    }
    connection = await asyncpg.connect(default_postgres)
    try:
        assert await connection.fetchval("SHOW max_connections") == "100"
    finally:
        await connection.close()

    first, second = Stack("first", env, tmp_path), Stack("second", env, tmp_path)
    budget = 2 * roles.stack_connections(API_WORKERS)
    try:
        async with peak_connections(default_postgres) as peak:
            for role in ROLES:  # as docs/operations.md says: one per terminal
                first.start(role)
            for role in ROLES:  # the same on the same host, on ports of its own
                metrics = free_ports(API_WORKERS if role == "api" else 1)
                api_port = local_processes.free_port() if role == "api" else None
                second.start(role, api_port=api_port, metrics=metrics)
            everyone = first.processes + second.processes
            async with httpx.AsyncClient(timeout=2) as http:
                deadline = time.monotonic() + 150
                waiting = list(everyone)
                while waiting:
                    exited = [p for p in everyone if p.popen.poll() is not None]
                    assert not exited, f"{[p.role for p in exited]} exited\n{tail([first, second])}"
                    assert time.monotonic() < deadline, (
                        f"not ready: {waiting}\n{tail([first, second])}"
                    )
                    waiting = [p for p in waiting if not await ready(http, p)]
                    await asyncio.sleep(0.5)
            # Every reader of the instance alive, caught up and not waiting (Kafka included).
            deadline = time.monotonic() + 90
            while (checked := await status(env)).returncode != 0:
                assert time.monotonic() < deadline, checked.stdout + checked.stderr
                await asyncio.sleep(2)
        for reader in ("rm_inbox", "relay", "inbound", "scheduler"):
            assert reader in checked.stdout, checked.stdout
        print(f"two stacks: at most {peak[0]} connections at once (budget {budget})")
        assert peak[0] <= budget, f"{peak[0]} connections at once, the budget is {budget}"
        assert all(p.popen.poll() is None for p in first.processes + second.processes)
        assert "too many clients" not in tail([first, second])
    finally:
        first.stop()
        second.stop()
