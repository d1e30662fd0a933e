"""A process started while PostgreSQL is down waits for it, saying so in its log and on its
metrics port, and comes up once it is back (services/processes/waiting.py): an orchestrator may
start
every process at once, in any order, and a PostgreSQL restart at the wrong moment costs a
wait, not a dead process."""

import asyncio
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.servers import ROOT, local_postgres, local_processes, own_postgres

FEEDBACKLOOP = ROOT / ".venv" / "bin" / "feedbackloop"
WAITING = 'feedbackloop_start_waiting{dependency="postgresql"}'


@pytest.fixture
def stopped_postgres(tmp_path: Path) -> Iterator[tuple[Path, local_postgres.PostgresServer]]:
    """A PostgreSQL of the test's own, initialised and then stopped (its data kept, to be
    started again from its directory)."""
    workdir = tmp_path / "postgres"
    with own_postgres(workdir) as server:
        server.stop(remove=False)
        yield workdir, server


def launch(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("w") as out:
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


async def metric(http: httpx.AsyncClient, port: int, name: str) -> float | None:
    try:
        text = (await http.get(f"http://127.0.0.1:{port}/metrics")).text
    except httpx.HTTPError:
        return None
    values = [line.split()[-1] for line in text.splitlines() if line.startswith(name + " ")]
    return float(values[0]) if values else None


async def test_a_process_started_while_postgresql_is_down_comes_up_once_it_is_back(
    stopped_postgres: tuple[Path, local_postgres.PostgresServer], tmp_path: Path
) -> None:
    workdir, server = stopped_postgres
    env = {
        **os.environ,
        "DATABASE_URL": server.url,
        "FEEDBACKLOOP_READER_MAX_SILENCE_SECONDS": "10",
    }
    env.pop("KAFKA_BOOTSTRAP_SERVERS", None)
    api_port, api_metrics, projector_metrics = (local_processes.free_port() for _ in range(3))
    started = {
        "api": ([str(FEEDBACKLOOP), "api", "--workers", "1", "--port", str(api_port)], api_metrics),
        "projector": ([str(FEEDBACKLOOP), "projector"], projector_metrics),
    }
    logs = {role: tmp_path / f"{role}.log" for role in started}
    processes = {
        role: launch(command, env | {"FEEDBACKLOOP_METRICS_PORT": str(port)}, logs[role])
        for role, (command, port) in started.items()
    }

    def tails() -> str:
        return "\n".join(f"--- {r} ---\n{log.read_text()[-3000:]}" for r, log in logs.items())

    try:
        async with httpx.AsyncClient(timeout=2) as http:
            # Each says it waits: in its log, and on its metrics port (served before the wait).
            deadline = time.monotonic() + 60
            for role, (_, metrics_port) in started.items():
                while (
                    "waiting for PostgreSQL at 127.0.0.1" not in logs[role].read_text()
                    or await metric(http, metrics_port, WAITING) != 1.0
                ):
                    assert processes[role].poll() is None, tails()
                    assert time.monotonic() < deadline, tails()
                    await asyncio.sleep(0.2)
            assert all(p.poll() is None for p in processes.values()), tails()

            await asyncio.to_thread(local_postgres.start_postgres, workdir, port=server.port)

            deadline = time.monotonic() + 90
            while True:  # the API ready, and the projector's readers following
                assert all(p.poll() is None for p in processes.values()), tails()
                assert time.monotonic() < deadline, tails()
                try:
                    answer = await http.get(f"http://127.0.0.1:{api_port}/readyz")
                    api_ready = answer.status_code == 200
                except httpx.HTTPError:
                    api_ready = False
                if api_ready:
                    checked = await asyncio.to_thread(
                        subprocess.run,
                        [str(FEEDBACKLOOP), "status", "--reader", "rm_inbox"],
                        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
                    )  # fmt: skip
                    if checked.returncode == 0:
                        break
                await asyncio.sleep(0.5)
            for role, (_, metrics_port) in started.items():
                assert await metric(http, metrics_port, WAITING) == 0.0, tails()
                assert "PostgreSQL at 127.0.0.1" in logs[role].read_text()
                assert "connected" in logs[role].read_text(), tails()
    finally:
        for process in processes.values():
            process.terminate()
        for process in processes.values():
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()


@pytest.mark.parametrize("role", [["api", "--workers", "2"], ["projector"]])
async def test_a_process_waiting_for_postgresql_stops_when_asked(
    role: list[str], tmp_path: Path
) -> None:
    """SIGTERM ends the wait (for the API: uvicorn's handler alone would wait for a start-up
    that never completes)."""
    env = {
        **os.environ,
        "DATABASE_URL": f"postgresql://postgres@127.0.0.1:{local_processes.free_port()}/postgres",
        "FEEDBACKLOOP_PORT": str(local_processes.free_port()),
        "FEEDBACKLOOP_METRICS_PORT": "0",
    }
    log = tmp_path / "process.log"
    process = launch([str(FEEDBACKLOOP), *role], env, log)
    try:
        async with asyncio.timeout(60):
            while log.read_text().count("waiting for PostgreSQL") < (2 if role[0] == "api" else 1):
                assert process.poll() is None, log.read_text()
                await asyncio.sleep(0.2)
        process.terminate()
        await asyncio.to_thread(process.wait, 30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
            raise AssertionError(f"still waiting after SIGTERM\n{log.read_text()[-3000:]}")
