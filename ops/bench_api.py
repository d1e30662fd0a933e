"""``feedbackloop api`` under measure: started in a subprocess on a database with its
default (production) server settings, each worker's metrics URL known, and stopped."""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import httpx
import local_processes

ROOT = Path(__file__).resolve().parent.parent


def free_ports(count: int) -> int:
    """The first of ``count`` loopback ports in a row that were free a moment ago."""
    while True:
        first = local_processes.free_port()
        with contextlib.ExitStack() as held:
            try:
                for port in range(first, first + count):
                    held.enter_context(socket.socket()).bind(("127.0.0.1", port))
            except OSError:
                continue
        return first


class Served(NamedTuple):
    """``feedbackloop api`` running: its process, its base URL, each worker's metrics URL."""

    process: subprocess.Popen[bytes]
    base: str
    metrics: list[str]


def start_api(
    url: str,
    keys: str,
    out: Path,
    workers: int | None = None,
    program: list[str] | None = None,
    settings: dict[str, str] | None = None,
) -> Served:
    """``feedbackloop api`` with its default (production) server settings; ``workers``
    overrides its default of one worker process per core. Also each worker's metrics URL.
    ``program``: another command line serving the same way (part ``audit``: the API without
    its audit, ``ops/bench_unaudited_api.py``); ``settings``: more of its environment."""
    port, count = local_processes.free_port(), workers or os.cpu_count() or 1
    metrics = free_ports(count)  # worker k serves them on the first free port of these
    env = os.environ | {"DATABASE_URL": url, "FEEDBACKLOOP_API_KEYS": keys} | (settings or {})
    env |= {"FEEDBACKLOOP_HOST": "127.0.0.1", "FEEDBACKLOOP_PORT": str(port)}
    env["FEEDBACKLOOP_METRICS_PORT"] = str(metrics)
    env["FEEDBACKLOOP_LOG_LEVEL"] = "WARNING"  # no access-log line per request
    # The code of this checkout, also when the venv's editable install points at another one.
    paths = [str(ROOT), str(ROOT / "ops"), os.environ.get("PYTHONPATH")]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
    with (out / "api.log").open("wb") as log:
        command = program or [str(Path(sys.executable).parent / "feedbackloop"), "api"]
        command += [] if workers is None else ["--workers", str(workers)]
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    base, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                time.sleep(1)  # every worker up, not only the first to answer
                ports = range(metrics, metrics + count)
                return Served(process, base, [f"http://127.0.0.1:{p}/metrics" for p in ports])
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    stop_process(process)
    log_tail = local_processes._tail(out / "api.log", 15)
    raise RuntimeError(f"feedbackloop api did not come up; {out / 'api.log'} ends:\n{log_tail}")


def stop_process(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
