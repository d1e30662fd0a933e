"""The service's own processes under measure: ``feedbackloop
rebuild`` and ``feedbackloop relay`` run as an operator runs them, each a subprocess whose peak
resident memory, like that of the API's processes, is read from ``/proc`` while it runs
(``VmHWM``).

``ops/bench.py`` runs them in its parts ``log`` (the rebuild's speed) and ``memory`` (the
projector's and the relay's peak memory with 1M and then 2M events stored: flat means neither
holds history). Timings are recorded, never asserted.
"""

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "ops")]

import asyncpg  # noqa: E402

from services.followers.follower import ensure_tables, read_position  # noqa: E402
from services.kafka.relay import NAME as RELAY  # noqa: E402
from services.store.event_store import EVENTS_TABLE  # noqa: E402


def service_env(url: str, **more: str) -> dict[str, str]:
    """The environment of a ``feedbackloop`` subprocess on this checkout's code."""
    env = os.environ | {"DATABASE_URL": url, "FEEDBACKLOOP_METRICS_PORT": "0"}
    env["FEEDBACKLOOP_LOG_LEVEL"] = "WARNING"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return env | more


def feedbackloop(*args: str, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    command = [str(Path(sys.executable).parent / "feedbackloop"), *args]
    with log.open("ab") as out:
        return subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)


def reap(process: subprocess.Popen[bytes]) -> dict[str, Any]:
    """Wait for the process; its exit status, CPU time and peak resident memory.

    The peak is its ``VmHWM``, read every 50 ms while it runs: ``wait4``'s ``ru_maxrss`` also
    counts what this process held when it forked the child (Linux carries the high-water mark
    across ``exec``), so once the bench has grown past the child, every child would report
    the bench's peak. The peak of its worker processes (a
    rebuild's, ``services.projecting.apart``) is read alike: the largest of any of them.

    ``cpu_s`` is that of the process and every process under it (a rebuild's fork server and
    its workers), each read from /proc as it runs: ``wait4`` counts only the children a
    process waited for, and a rebuild's workers are the fork server's, which nobody waits
    for. What a process spends in its last 50 ms is missed."""
    peak, workers, cpu = None, dict[int, float](), dict[int, float]()
    while True:
        pid, status, _ = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        peak = peak_rss_mb(process.pid) or peak  # None once it has exited (no memory left)
        under = descendants(process.pid)
        for each in [process.pid, *under]:
            cpu[each] = cpu_seconds(each) or cpu.get(each, 0.0)
        for child in worker_processes(process.pid, under):
            workers[child] = peak_rss_mb(child) or workers.get(child, 0.0)
        time.sleep(0.05)
    process.returncode = os.waitstatus_to_exitcode(status)
    return {
        "returncode": process.returncode,
        "peak_rss_mb": peak,
        "workers": len(workers),
        "workers_peak_rss_mb": max(workers.values(), default=None),
        "cpu_s": round(sum(cpu.values()), 2),
    }


def descendants(pid: int) -> list[int]:
    """A live process's children, theirs, and so on."""
    return [each for child in children(pid) for each in (child, *descendants(child))]


def worker_processes(pid: int, under: list[int]) -> list[int]:
    """The worker processes among those ``under`` a process: all but multiprocessing's
    resource tracker and fork server (its own children; the workers are the fork server's)."""
    helpers = {each for each in under if parent(each) == pid and helper(each)}
    return [each for each in under if each not in helpers]


def helper(pid: int) -> bool:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False  # gone: its peak reads as None
    return b"resource_tracker" in command or b"forkserver" in command


def parent(pid: int) -> int | None:
    fields = stat_fields(pid)
    return None if fields is None else int(fields[1])


def stat_fields(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` after the command's name (state, parent, …); None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def peak_rss_mb(pid: int) -> float | None:
    """A live process's peak resident memory so far (``VmHWM``), None once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return None


def children(pid: int) -> list[int]:
    """A live process's children, any thread's (from /proc: cheap enough to read every 50 ms)."""
    found = []
    for listed in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found += [int(child) for child in listed.read_text().split()]
        except OSError:
            continue
    return found


def cpu_seconds(pid: int | None, with_children: bool = False) -> float | None:
    """User + system CPU seconds of a process, every thread (and of its live children), from
    /proc."""
    if pid is None:
        return None
    total = 0.0
    for each in [pid, *(children(pid) if with_children else [])]:
        if (fields := stat_fields(each)) is not None:  # else gone meanwhile
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def process_tree_rss(pid: int) -> dict[str, float | None]:
    """Peak memory of a process and of each of its children (the API's workers and
    multiprocessing's resource tracker)."""
    peaks = {"main": peak_rss_mb(pid)}
    workers = 0
    for child in sorted(children(pid)):
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"resource_tracker" in command:  # multiprocessing's helper, not a worker
            peaks["resource tracker"] = peak_rss_mb(child)
        else:
            workers += 1
            peaks[f"worker {workers}"] = peak_rss_mb(child)
    return peaks


def rebuild_process(url: str, log: Path) -> dict[str, Any]:
    """``feedbackloop rebuild``: every read model from position 0, as an operator runs it.
    ``seconds`` is the rebuild's own (its last line), the whole process's is ``wall_s``: the
    process also starts (imports, connections) for a few seconds."""
    log.write_text("")
    t0 = time.perf_counter()
    process = feedbackloop("rebuild", env=service_env(url, COLUMNS="120"), log=log)
    result = reap(process)
    result["wall_s"] = round(time.perf_counter() - t0, 3)
    if result["returncode"] != 0:
        raise RuntimeError(f"feedbackloop rebuild failed; see {log}")
    found = re.search(r"events in ([0-9.]+) s", log.read_text())
    if found is None:
        raise RuntimeError(f"feedbackloop rebuild did not say how long it took; see {log}")
    return result | {"seconds": float(found.group(1))}


async def relay_process(url: str, bootstrap: str, window: int, log: Path) -> dict[str, Any]:
    """``feedbackloop relay`` publishing the newest ``window`` events of the store (its
    position set just behind them): what it holds must not depend on what lies before."""
    pool = await asyncpg.create_pool(url, min_size=1, max_size=2)
    try:
        async with pool.acquire() as conn:
            await ensure_tables(conn)
            head = await conn.fetchval(f"SELECT max(notification_id) FROM {EVENTS_TABLE}") or 0
            await conn.execute(
                "INSERT INTO reader_positions (reader, position) VALUES ($1, $2) "
                "ON CONFLICT (reader) DO UPDATE SET position = $2",
                RELAY,
                max(0, head - window),
            )
        prefix = f"benchmem{os.getpid()}{int(time.time())}."
        env = service_env(url, KAFKA_BOOTSTRAP_SERVERS=bootstrap, FEEDBACKLOOP_TOPIC_PREFIX=prefix)
        t0 = time.perf_counter()
        process = feedbackloop("relay", env=env, log=log)
        try:
            while await read_position(pool, RELAY) < head:
                if process.poll() is not None:
                    raise RuntimeError(f"feedbackloop relay exited; see {log}")
                await asyncio.sleep(0.05)
            seconds = time.perf_counter() - t0
        finally:
            process.send_signal(signal.SIGTERM)
        result = reap(process)
    finally:
        await pool.close()
    return result | {"events": window, "seconds": round(seconds, 3), "head": head}
