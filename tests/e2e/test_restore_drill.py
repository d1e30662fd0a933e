"""The restore drill (SPEC C54, decisions D48–D50, docs/recovery.md): a PostgreSQL of its own
archiving its WAL, the service under load, a base backup taken by ``feedbackloop backup``,
more load, the primary lost, a point-in-time restore to 10 s before the end by the runbook's
commands, the service up again, its read models equal to the store, the relay held by what it
finds on Kafka beyond the store until acknowledged, then publishing again.

It writes what it measured (RPO: data lost; RTO: time from the start of the restore to a
ready service) to ``var/recovery/drill.json`` and prints it.
"""

import asyncio
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from tests.conftest import Keys
from tests.e2e.conftest import ROOT, auth, free_port, wait_until_healthy
from tests.kafka_peer import consume
from tests.servers import delete_topics, local_postgres

LOAD_BEFORE_BACKUP, LOAD_AFTER_BACKUP = 4.0, 20.0  # seconds of load
BACK_BY = timedelta(seconds=10)  # the restore's target: this long before the load ended
ARCHIVE_TIMEOUT = 2  # seconds: WAL older than this is in the archive (the drill's RPO floor)
RECORDED = "services.feedback.domain:Feedback.Recorded"  # the stored topic of new feedback
BODY = {"projectId": "drill", "subjectKind": "run", "subjectRef": "run-1", "kind": "rating"}

pytestmark = pytest.mark.timeout(600)


@contextmanager
def drill_dir() -> Iterator[Path]:
    """A directory the server's user can reach (pytest's tmp_path is root's alone)."""
    base = Path(tempfile.mkdtemp(prefix="fl-drill-", dir="/tmp"))
    base.chmod(0o755)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def archiving(wal: Path) -> str:
    """The server options of continuous archiving into ``wal`` (docs/recovery.md)."""
    command = f"test ! -f {wal}/%f && cp %p {wal}/%f"
    return " ".join(
        [
            "-c wal_level=replica -c archive_mode=on",
            f"-c archive_timeout={ARCHIVE_TIMEOUT}",
            "-c " + shlex.quote(f"archive_command={command}"),
        ]
    )


def feedbackloop(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "services.processes.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def serve(env: dict[str, str], log: Path) -> "subprocess.Popen[bytes]":
    with log.open("a") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "services.processes.cli", "serve"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def crash(server: local_postgres.PostgresServer) -> None:
    """The server lost: stopped as by a crash, its data directory gone."""
    subprocess.run(
        server._cmd("pg_ctl", "-D", server.data_dir, "-m", "immediate", "stop"),
        check=True,
        capture_output=True,
    )
    shutil.rmtree(server.data_dir)


@asynccontextmanager
async def running_service(env: dict[str, str], log: Path) -> AsyncIterator[httpx.AsyncClient]:
    port = free_port()
    process = serve({**env, "FEEDBACKLOOP_PORT": str(port), "FEEDBACKLOOP_METRICS_PORT": "0"}, log)
    try:
        await asyncio.to_thread(wait_until_healthy, f"http://127.0.0.1:{port}", process, log)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            yield http
    finally:
        process.terminate()
        await asyncio.to_thread(process.wait, 30)


async def load(
    http: httpx.AsyncClient, key: str, accepted: dict[str, datetime], stop: asyncio.Event
) -> None:
    """Feedback one at a time until ``stop``, each accepted id with the time it was answered;
    never cancelled mid-request, so that nothing is stored that the drill does not know of."""
    while not stop.is_set():
        body = {**BODY, "rating": len(accepted) % 5 + 1}
        answer = await http.post("/factory/feedback", json=body, headers=auth(key))
        assert answer.status_code == 201, answer.text
        accepted[answer.json()["feedbackId"]] = datetime.now(UTC)
        await asyncio.sleep(0.05)


async def read_model_ids(http: httpx.AsyncClient, key: str) -> set[str]:
    ids: set[str] = set()
    params: dict[str, Any] = {"limit": 200}
    while True:
        page = (await http.get("/factory/feedback", params=params, headers=auth(key))).json()
        ids.update(item["feedbackId"] for item in page["items"])
        if not page["next"]:
            return ids
        params["before"] = page["next"]


async def until(check: Any, what: str, seconds: float = 120) -> Any:
    """Wait for ``check()`` to answer something true (a wait, not a timed assert)."""
    async with asyncio.timeout(seconds):
        while not (found := await check()):
            await asyncio.sleep(0.3)
    assert found, what
    return found


async def test_a_point_in_time_restore_serves_again_with_read_models_and_relay_consistent(
    kafka_bootstrap: str, keys: Keys, tmp_path: Path
) -> None:
    prefix = f"drill{uuid.uuid4().hex[:6]}."
    with drill_dir() as base:
        wal = base / "wal"
        wal.mkdir()
        shutil.chown(wal, "postgres", "postgres") if os.geteuid() == 0 else None
        primary = local_postgres.start_postgres(
            base / "primary", fast=False, options=archiving(wal)
        )
        restored = None
        try:
            restored = await drill(primary, base, tmp_path, wal, kafka_bootstrap, keys, prefix)
        finally:
            await delete_topics(kafka_bootstrap, prefix)
            primary.stop()
            if restored is not None:
                restored.stop()


async def drill(
    primary: local_postgres.PostgresServer,
    base: Path,
    kept: Path,
    wal: Path,
    kafka: str,
    keys: Keys,
    prefix: str,
) -> local_postgres.PostgresServer:
    env = {
        **os.environ,
        "DATABASE_URL": primary.url,
        "KAFKA_BOOTSTRAP_SERVERS": kafka,
        "FEEDBACKLOOP_API_KEYS": keys.entries,
        "FEEDBACKLOOP_TOPIC_PREFIX": prefix,
        "FEEDBACKLOOP_INBOUND_GROUP_ID": f"drill-{uuid.uuid4().hex[:6]}",
        # Two partitions are enough to hold one partition's records beyond the store and
        # another's not; the shared broker keeps a file open per partition.
        "FEEDBACKLOOP_TOPIC_PARTITIONS": "2",
    }
    topic = prefix + "evaluation.feedback.v1.feedback-recorded"
    accepted: dict[str, datetime] = {}
    log, backups = kept / "service.log", base / "backup"

    # Load under way, a base backup by the command, more load.
    async with running_service(env, log) as http:
        stop = asyncio.Event()
        loading = asyncio.create_task(load(http, keys.a, accepted, stop))
        await asyncio.sleep(LOAD_BEFORE_BACKUP)
        taken = await asyncio.to_thread(feedbackloop, "backup", "--to", str(backups), env=env)
        assert taken.returncode == 0, taken.stderr
        backup_dir = Path(taken.stdout.strip().splitlines()[-1])
        await asyncio.sleep(LOAD_AFTER_BACKUP)
        stop.set()
        await loading
        ended = max(accepted.values())
        # Everything accepted reached Kafka before the disaster.
        await until(lambda: published(kafka, topic, len(accepted)), "all published")
    await asyncio.sleep(ARCHIVE_TIMEOUT * 2)  # the last WAL of the load archived

    # The primary is lost: crashed, its data directory gone; the archive and backup remain.
    crash(primary)

    # The runbook (docs/recovery.md), timed from here.
    started = time.monotonic()
    target = ended - BACK_BY
    into = base / "restored" / "data"
    prepared = feedbackloop(
        "restore", "prepare", "--backup", str(backup_dir), "--wal-archive", str(wal),
        "--into", str(into), "--target-time", target.isoformat(),
        *(["--owner", "postgres"] if os.geteuid() == 0 else []),
        env=env,
    )  # fmt: skip
    assert prepared.returncode == 0, prepared.stderr
    stages = {"prepared": time.monotonic() - started}
    restored = local_postgres.start_postgres(base / "restored", fast=False)
    await until(lambda: promoted(restored.url), "recovery finished")
    stages["postgres_promoted"] = time.monotonic() - started
    env = {**env, "DATABASE_URL": restored.url}
    async with running_service(env, log) as http:
        stages["service_healthy"] = time.monotonic() - started
        # The relay holds: Kafka has events the store lost; the service says so.
        held = await until(lambda: diverged(http), "the relay holds")
        stages["relay_held"] = time.monotonic() - started
        assert "feedbackloop restore check" in json.dumps(held)
        checked = feedbackloop("restore", "check", env=env)
        assert checked.returncode == 1, checked.stderr
        out = base / "beyond.jsonl"
        acknowledged = feedbackloop("restore", "acknowledge", "--out", str(out), env=env)
        assert acknowledged.returncode == 0, acknowledged.stderr
        stages["acknowledged"] = time.monotonic() - started
        await until(lambda: ready(http), "ready after the acknowledgement")
        serving = time.monotonic() - started

        # The store kept what came before the target and lost what came after it.
        in_store = await stored_feedback(restored.url)
        lost = set(accepted) - in_store
        assert in_store <= set(accepted)
        assert all(accepted[i] > target - timedelta(seconds=1) for i in lost)
        kept_late = [i for i in in_store if accepted[i] > target + timedelta(seconds=1)]
        assert not kept_late, "the restore went past its target"
        assert lost, "the drill lost nothing: its target was not before the end"
        # What the relay found beyond the store is exactly what was lost.
        beyond = [json.loads(line) for line in out.read_text().splitlines()]
        assert {b["subject"] for b in beyond} == lost
        # Read models equal the store.
        assert await read_model_ids(http, keys.a) == in_store
        # The relay publishes again, without loss: a new feedback reaches Kafka, and every
        # stored one is on the topic.
        answer = await http.post(
            "/factory/feedback", json={**BODY, "rating": 3}, headers=auth(keys.a)
        )
        assert answer.status_code == 201, answer.text
        new = answer.json()["feedbackId"]
        records = await until(
            lambda: published(kafka, topic, len(accepted) + 1, containing=new), "new published"
        )
        on_topic = {json.loads(r.value)["subject"] for r in records}
        assert in_store | {new} <= on_topic

    last_kept = max(accepted[i] for i in in_store)
    figures = {
        "rpo_seconds": round((ended - last_kept).total_seconds(), 1),
        "rpo_target_seconds": BACK_BY.total_seconds(),
        "events_lost": len(lost),
        "events_kept": len(in_store),
        "rto_seconds": round(serving, 1),
        "rto_stages_seconds": {name: round(at, 1) for name, at in stages.items()},
        "spec_c54": {"rpo_minutes": 15, "rto_minutes": [60, 240]},
        "archive_timeout_seconds": ARCHIVE_TIMEOUT,
        "records_beyond_the_store": len(beyond),
    }
    (ROOT / "var" / "recovery").mkdir(parents=True, exist_ok=True)
    (ROOT / "var" / "recovery" / "drill.json").write_text(json.dumps(figures, indent=2) + "\n")
    print(f"\nrestore drill: {json.dumps(figures)}")
    assert figures["rto_seconds"] < 60 * 60  # SPEC C54: RTO 60 to 240 min
    assert figures["rpo_seconds"] < 15 * 60  # SPEC C54: RPO 15 min
    return restored


async def published(
    kafka: str, topic: str, count: int, containing: str | None = None
) -> list[Any] | None:
    records = await consume(kafka, topic, 10**9, timeout=5)  # all of it: re-published ones too
    subjects = {json.loads(r.value)["subject"] for r in records}
    if len(subjects) < count or (containing is not None and containing not in subjects):
        return None
    return records


async def promoted(url: str) -> bool:
    try:
        conn = await asyncpg.connect(url)
    except (OSError, asyncpg.PostgresError):
        return False
    try:
        return not await conn.fetchval("SELECT pg_is_in_recovery()")
    finally:
        await conn.close()


async def diverged(http: httpx.AsyncClient) -> Any:
    answer = await http.get("/readyz")
    return answer.status_code == 503 and "diverged" in answer.text and answer.json()


async def ready(http: httpx.AsyncClient) -> bool:
    return (await http.get("/readyz")).status_code == 200


async def stored_feedback(url: str) -> set[str]:
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            "SELECT originator_id FROM feedbackloop_events WHERE topic = $1", RECORDED
        )
    finally:
        await conn.close()
    return {str(row["originator_id"]) for row in rows}
