"""Readiness means "can serve": ``/readyz`` answers 503 only for what stops this process
serving (no database, a reader of its own that is not running); a parked event — possibly
one tenant's bad input — degrades the instance for its operators but keeps it in the load
balancer (services/processes/health.py)."""

import asyncio
import os
import re
import subprocess
import uuid

import httpx
from prometheus_client import REGISTRY

from services.processes.bootstrap import Runtime
from services.processes.read_model_gauges import refresh
from services.processes.settings import Settings
from tests.conftest import Keys, settings_for
from tests.integration.test_follower import Recorder, broken_reader
from tests.servers import ROOT, local_postgres


def readyz_client(runtime: Runtime) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=runtime.app(), raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://test")


async def parked(runtime: Runtime, reader: str) -> None:
    async with asyncio.timeout(30):
        while not await runtime.pool.fetchval(
            "SELECT count(*) FROM parked WHERE reader = $1", reader
        ):
            await asyncio.sleep(0.05)


async def test_a_parked_event_leaves_readyz_200_with_the_instance_degraded(
    runtime: Runtime,
) -> None:
    reader, (_, good) = broken_reader(runtime, 2, ticks=1)
    runtime.follow(reader)
    await parked(runtime, reader.name)
    async with asyncio.timeout(30):  # the other aggregate flows on
        while (good.id, 2) not in reader.applied:
            await asyncio.sleep(0.05)

    # The alert: the gauges every process that serves metrics reads from the database,
    # whether or not anything polls its /readyz.
    await refresh(runtime.pool)
    assert REGISTRY.get_sample_value("feedbackloop_degraded") == 1
    value = REGISTRY.get_sample_value(
        "feedbackloop_instance_parked_events", {"reader": reader.name}
    )
    assert value == 2

    async with readyz_client(runtime) as http:
        answer = await http.get("/readyz")

    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["status"] == "ok"
    assert body["degraded"] is True
    assert body["incidents"] == {reader.name: ["2 parked events (feedbackloop parked list)"]}
    (mine,) = [r for r in body["readers"] if r["name"] == reader.name]
    assert mine["problems"] == []
    assert mine["parked"] == 2

    # Skipped for good (feedbackloop parked skip): no longer degraded (the gauge back to 0,
    # the reader's series gone).
    await runtime.pool.execute("DELETE FROM parked WHERE reader = $1", reader.name)
    async with readyz_client(runtime) as http:
        again = await http.get("/readyz")
    assert again.json()["degraded"] is False
    await refresh(runtime.pool)
    assert REGISTRY.get_sample_value("feedbackloop_degraded") == 0
    value = REGISTRY.get_sample_value(
        "feedbackloop_instance_parked_events", {"reader": reader.name}
    )
    assert value is None  # a reader with nothing parked has no series: its count is zero


async def test_status_exits_0_and_says_degraded_when_a_reader_parked_an_event(
    runtime: Runtime,
) -> None:
    """``feedbackloop status`` answers as /readyz does (compose's health checks call it)."""
    reader, _ = broken_reader(runtime, 1, ticks=0)
    runtime.follow(reader)
    await parked(runtime, reader.name)
    env = {**os.environ, "DATABASE_URL": runtime.database_url, "COLUMNS": "200"}
    checked = await asyncio.to_thread(
        subprocess.run,
        [str(ROOT / ".venv" / "bin" / "feedbackloop"), "status", "--reader", reader.name],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"degraded: incidents in {reader.name}" in checked.stderr
    assert "1 parked events (feedbackloop parked list)" in checked.stdout


async def test_readyz_is_200_and_not_degraded_with_nothing_parked(runtime: Runtime) -> None:
    async with readyz_client(runtime) as http:
        answer = await http.get("/readyz")
    assert answer.status_code == 200, answer.text
    assert answer.json()["degraded"] is False
    assert answer.json()["incidents"] == {}


async def test_a_reader_of_this_process_that_stopped_makes_readyz_503(runtime: Runtime) -> None:
    reader = Recorder(f"test-{uuid.uuid4().hex[:6]}", transactional=True)
    runtime.follow(reader)
    task = runtime.supervisor.tasks[reader.name].task
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)

    async with readyz_client(runtime) as http:
        answer = await http.get("/readyz")

    assert answer.status_code == 503, answer.text
    (mine,) = [r for r in answer.json()["readers"] if r["name"] == reader.name]
    assert mine["problems"][0] == "its task has ended"


async def test_readyz_answers_503_without_the_database(
    own_postgres: local_postgres.PostgresServer, keys: Keys
) -> None:
    settings: Settings = settings_for(own_postgres.url, keys)
    runtime = await Runtime.open(settings)
    try:
        async with readyz_client(runtime) as http:
            assert (await http.get("/readyz")).status_code == 200
            await asyncio.to_thread(own_postgres.stop, remove=False)
            answer = await http.get("/readyz")
        assert answer.status_code == 503, answer.text
        assert answer.json()["status"] == "not ready"
        # the kind of error only: the driver's message may name the host, and /readyz asks
        # for no key
        assert re.fullmatch(r"unreachable: \w+", answer.json()["database"]), answer.text
        assert "127.0.0.1" not in answer.text
        assert str(own_postgres.port) not in answer.text
    finally:
        await runtime.close()
