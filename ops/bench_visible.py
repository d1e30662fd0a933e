"""Command → read model visible (part ``visible`` of ``ops/bench.py``): an open loop of
RecordFeedback at ``--rate``, and how long until a read with ``minPosition`` answers."""

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import uvloop
from bench_api import start_api, stop_process
from bench_feedback import TENANT, body
from bench_figures import Bench, Target, console, row
from bench_measures import latency_ms
from bench_wrk import wrk

from services.edge.auth import new_key

ROOT = Path(__file__).resolve().parent.parent


def visible_samples(base: str, key: str, rate: float, seconds: float) -> dict[str, Any]:
    """At ``rate`` a second, a RecordFeedback of its own subject and, right after its 201, a
    read of that subject with the 201's position as ``minPosition``: the time from the 201 to
    that read's answer. Baseline: the same read again without ``minPosition`` (what a read
    costs when nothing is awaited). A request that fails or is refused is an error, never a
    time.

    Each sample runs on a thread of its own with a blocking client: one asynchronous httpx
    client carrying a few dozen samples at once times its own queueing, not the server's
    answer."""
    waited: list[float] = []
    plain: list[float] = []
    headers = {"Authorization": f"Bearer {key}"}
    local = threading.local()

    def one(n: int) -> None:
        if not hasattr(local, "client"):
            local.client = httpx.Client(base_url=base, headers=headers, timeout=30)
        c = local.client
        subject = f"visible-{n}-{uuid.uuid4().hex[:6]}"
        posted = c.post("/factory/feedback", json=body(n) | {"subjectRef": subject})
        if posted.status_code != 201:
            raise RuntimeError(posted.status_code)
        start = time.perf_counter()
        query = {"subjectRef": subject, "minPosition": posted.json()["position"]}
        read = c.get("/factory/feedback", params=query)
        seen = time.perf_counter()
        if read.status_code != 200 or not read.json()["items"]:
            raise RuntimeError(read.status_code)
        c.get("/factory/feedback", params={"subjectRef": subject})
        waited.append(seen - start)
        plain.append(time.perf_counter() - seen)

    total, started = int(rate * seconds), time.perf_counter()
    with ThreadPoolExecutor(max_workers=32) as pool:
        running = []
        for n in range(total):
            time.sleep(max(0.0, started + n / rate - time.perf_counter()))
            running.append(pool.submit(one, n))
        errors = sum(future.exception() is not None for future in running)
    return {
        "commands": total,
        "errors": errors,
        "visible_ms": latency_ms(waited or [0.0]),
        "read_ms": latency_ms(plain or [0.0]),
    }


async def visible(base: str, key: str, rate: float, seconds: int) -> dict[str, Any]:
    """wrk holds the load near ``rate`` commands/s (256 connections, each pausing
    between requests; the pause calibrated by a short run first), while 25 commands a second of
    it are sampled for read-your-writes (``visible_samples``). Many connections with long
    pauses: the rate then hangs on the pause more than on the latency under load (a few
    connections with short pauses fall short of the rate once the load slows the answers)."""
    sampled, connections = 25.0, 256
    load_rate = rate - sampled

    def pause_for(latency_ms: float) -> int:
        return max(0, round(connections * 1000 / load_rate - latency_ms))

    probe = await asyncio.to_thread(wrk, base, key, 5, connections, delay_ms=pause_for(0))
    delay = pause_for(probe["p50_us"] / 1000)
    load_run = asyncio.create_task(
        asyncio.to_thread(wrk, base, key, seconds, connections, delay_ms=delay)
    )
    await asyncio.sleep(1)  # the load at its rate before the first sample
    samples = await asyncio.to_thread(visible_samples, base, key, sampled, seconds - 2)
    load_done = await load_run
    ok = load_done["requests"] - load_done["status_errors"]
    return samples | {
        "load": load_done | {"connections": connections, "delay_ms": delay},
        "achieved_per_s": round(ok / load_done["seconds"] + sampled, 1),
        "errors": samples["errors"] + load_done["errors"],
    }


def part_visible(bench: Bench) -> list[dict[str, Any]]:
    """4. From a command's 201 to a read with its position answering, at 500 commands/s."""
    args = bench.args
    console.print(f"[bold]4.[/] read-your-writes at {args.rate} commands/s for {args.seconds} s …")
    key, entry = new_key(TENANT, "bench", ["factory.feedback.write", "factory.feedback.read"])
    env = os.environ | {"DATABASE_URL": bench.url, "FEEDBACKLOOP_METRICS_PORT": "0"}
    feedbackloop = str(Path(sys.executable).parent / "feedbackloop")
    with (bench.out / "projector.log").open("wb") as log:
        projector = subprocess.Popen(
            [feedbackloop, "projector", "--only", "feedback_list"],
            env=env | {"PYTHONPATH": str(ROOT)},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    process, base, _ = start_api(bench.url, json.dumps([entry]), bench.out)
    try:
        result = uvloop.run(visible(base, key, args.rate, args.seconds))
    finally:
        stop_process(process)
        stop_process(projector)
    bench.details |= {"visible": result}
    seen, read = result["visible_ms"], result["read_ms"]
    return [
        row(
            f"command → read model visible at {args.rate} commands/s, p99",
            seen["p99"],
            "ms",
            "the same read without minPosition, p99 (ms)",
            read["p99"],
            Target(50, at_most=True),
        ),
        row("  p50", seen["p50"], "ms", "the same read, p50 (ms)", read["p50"]),
        row("  commands per second, load and samples", result["achieved_per_s"], "commands/s"),
        row("  errors", result["errors"], "requests", target=Target(0, at_most=True)),
    ]
