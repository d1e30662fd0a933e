"""HTTP ingest (part ``http`` of ``ops/bench.py``): ``feedbackloop api`` driven by wrk, the
single route and the batch route, with the server's CPU, the append transactions, the events
appended in each second and the command bus's stages around each run; the command bus driven
in-process; both against the library appending in batches of 100, before and after."""

import argparse
import asyncio
import itertools
import json
import os
import threading
import time
import uuid
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from statistics import median
from typing import Any

import httpx
import psycopg
from bench_api import Served, start_api, stop_process
from bench_feedback import HEAD, TENANT, body, callers, feedback_bus
from bench_figures import Bench, Target, bracketing, console, row
from bench_library import save_timed
from bench_measures import latency_ms, machine_busy
from bench_processes import cpu_seconds, process_tree_rss
from bench_sql import append_transactions
from bench_wrk import wrk
from prometheus_client.parser import text_string_to_metric_families

from contracts.feedback import RecordFeedback
from services.bus.issued import Issued
from services.edge.auth import new_key
from services.store.event_store import EventStore

LIBRARY_BATCH = "library appends, batches of 100"


# The command bus's stages (``services.observing.metrics.BUS_SECONDS``), as the table names them.
BUS_STAGES = (
    ("queued", "waiting to be taken"),
    ("decide", "deciding, a hand-over to a thread included"),
    ("append", "appending, a hand-over to a thread included"),
)


class EachSecond:
    """The events appended in each second of a run, read from the log's head by a thread of
    its own: wrk reports percentiles over the whole run, and a stall shows here as a second
    that appended little (one probe of the primary key a second)."""

    def __init__(self, url: str) -> None:
        self.url, self.counts = url, list[int]()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._follow, name="each-second")

    def __enter__(self) -> "EachSecond":
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _follow(self) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:

            def head() -> int:
                [(position,)] = conn.execute(HEAD).fetchall()  # an aggregate: one row
                return int(position)

            last, tick = head(), time.monotonic()
            while not self._stop.wait(max(0.0, tick + 1 - time.monotonic())):
                tick += 1
                now = head()
                self.counts.append(now - last)
                last = now


def bus_totals(metrics: list[str]) -> Counter[tuple[str, str]]:
    """The command bus's histograms (``services.observing.metrics``), their sums and counts added up
    over the API's workers."""
    totals = Counter[tuple[str, str]]()
    for url in metrics:
        for family in text_string_to_metric_families(httpx.get(url, timeout=5).text):
            if family.name.startswith("feedbackloop_bus_"):
                for sample in family.samples:
                    if sample.name.endswith(("_sum", "_count")):
                        totals[sample.name, sample.labels.get("stage", "")] += sample.value
    return totals


def bus_means(
    before: Counter[tuple[str, str]], after: Counter[tuple[str, str]]
) -> dict[str, float]:
    """A batch's mean time in each stage of the bus (ms) and its mean size, between two
    readings of ``bus_totals``."""
    done = after - before

    def mean(name: str, stage: str = "") -> float:
        return done[f"{name}_sum", stage] / max(1, done[f"{name}_count", stage])

    stages = {
        f"{stage}_ms": round(1000 * mean("feedbackloop_bus_seconds", stage), 2)
        for stage, _ in BUS_STAGES
    }
    return stages | {"commands_per_batch": round(mean("feedbackloop_bus_batch_commands"), 1)}


def load(
    url: str, api: Served, key: str, seconds: int, connections: int, batch: int = 0
) -> dict[str, Any]:
    """A short warm-up, then the timed run, with CPU time, append transactions and the
    command bus's stages around it and the events appended in each of its seconds."""
    pid = api.process.pid
    wrk(api.base, key, max(2, seconds // 10), connections, batch)
    transactions, server = append_transactions(url), cpu_seconds(pid, with_children=True)
    machine, bus = machine_busy(), bus_totals(api.metrics)
    with EachSecond(url) as each:
        run = wrk(api.base, key, seconds, connections, batch)
    run["server_cpu_s"] = round((cpu_seconds(pid, with_children=True) or 0) - (server or 0), 2)
    run["machine_cpu_s"] = round(machine_busy() - machine, 2)
    run["transactions"] = append_transactions(url) - transactions
    run["events_each_second"] = each.counts
    run["bus"] = bus_means(bus, bus_totals(api.metrics))
    return run


def bench_http(
    url: str, args: argparse.Namespace, out: Path, program: list[str] | None = None
) -> dict[str, Any]:
    key, entry = new_key(TENANT, "bench", ["factory.feedback.write"])
    api = start_api(url, json.dumps([entry]), out, args.api_workers, program)
    try:
        single = load(url, api, key, args.seconds, args.connections)
        batch = load(url, api, key, args.batch_seconds, args.batch_connections, args.batch)
        peaks = process_tree_rss(api.process.pid)  # under the HTTP figure and the batch run
    finally:
        stop_process(api.process)
    for run, per_request in ((single, 1), (batch, args.batch)):
        ok = run["requests"] - run["status_errors"]
        run["commands"] = ok * per_request
        run["commands_per_s"] = round(run["commands"] / run["seconds"], 1)
        run["server_cpu_us_per_command"] = round(1e6 * run["server_cpu_s"] / max(1, ok), 1)
        if per_request > 1:
            run["server_cpu_us_per_command"] = round(
                1e6 * run["server_cpu_s"] / max(1, run["commands"]), 1
            )
        run["commands_per_transaction"] = round(run["commands"] / max(1, run["transactions"]), 1)
    return {
        "server": "subprocess `feedbackloop api` (uvloop, httptools), "
        + (
            f"defaults: {os.cpu_count()} workers"
            if args.api_workers is None
            else f"--workers {args.api_workers}"
        ),
        "client": "wrk, 2 threads, ops/wrk_record_feedback.lua",
        "single": single | {"connections": args.connections},
        "batch": batch | {"connections": args.batch_connections, "items_per_request": args.batch},
        "peak_rss_mb": peaks,
    }


async def drive_bus(
    store: EventStore, url: str, first: int, total: int, clients: int
) -> dict[str, Any]:
    """The bus as a process of the service builds it (``Runtime.open``)."""
    bus, loop_store = await feedback_bus(store, url)
    numbers, latencies = itertools.count(first), []

    async def worker() -> None:
        while (n := next(numbers)) < first + total:
            command = RecordFeedback.model_validate(body(n))
            t0 = time.perf_counter()
            await bus.execute(
                Issued(command, TENANT, "bench", str(uuid.uuid4()), datetime.now(UTC))
            )
            latencies.append(time.perf_counter() - t0)

    seconds = await callers(bus, loop_store, worker, clients)
    return {
        "commands": total,
        "coroutines": clients,
        "seconds": round(seconds, 3),
        "commands_per_s": round(total / seconds, 1),
        "latency_ms": latency_ms(latencies),
        "append_transactions": bus.transactions,
        "events_per_transaction": round(total / max(1, bus.transactions), 1),
    }


def part_http(bench: Bench) -> list[dict[str, Any]]:
    args = bench.args
    console.print(
        f"[bold]1.[/] HTTP: {args.connections} connections for {args.seconds} s (wrk), then "
        f"batches of {args.batch} for {args.batch_seconds} s, the library in batches of 100 "
        "before and after …"
    )
    half = args.library_events // 2
    before = save_timed(bench.store, bench.url, half, 100)
    http = bench_http(bench.url, args, bench.out)
    console.print("   the command bus in-process …")
    bus = asyncio.run(drive_bus(bench.store, bench.url, 10**7, args.bus_commands, args.connections))
    library = bracketing(before, save_timed(bench.store, bench.url, half, 100))
    bench.details |= {"http": http, "command_bus_direct": bus, "library_batched": library}
    single, batch, base = http["single"], http["batch"], library["events_per_s"]
    seconds = f"{args.seconds} s"
    if args.api_workers is not None:
        seconds += f", {args.api_workers} API workers"
    return [
        row(
            f"HTTP RecordFeedback, {args.connections} connections, {seconds}",
            single["commands_per_s"],
            "commands/s",
            LIBRARY_BATCH,
            base,
            Target(0.5, of="ratio"),  # the goals held to (docs/benchmarks.md)
        ),
        row("  same, absolute", single["commands_per_s"], "commands/s", target=Target(2000)),
        row(
            "  p99 latency",
            round(single["p99_us"] / 1000, 1),
            "ms",
            target=Target(50, at_most=True),
        ),
        row("  errors", single["errors"], "requests", target=Target(0, at_most=True)),
        row(
            "  its slowest second, events appended",
            min(single["events_each_second"], default=0),
            "events",
            "the median second",
            median(single["events_each_second"] or [0]),
        ),
        row("  server CPU per command", single["server_cpu_us_per_command"], "µs"),
        row("  commands per append transaction", single["commands_per_transaction"], "commands"),
        *(
            row(f"  a bus batch's mean time {name}", single["bus"][f"{stage}_ms"], "ms")
            for stage, name in BUS_STAGES
        ),
        row(
            f"HTTP batch, {args.batch} items a request, {args.batch_connections} connections",
            batch["commands_per_s"],
            "items/s",
            LIBRARY_BATCH,
            base,
            Target(1.2, of="ratio"),
        ),
        row("  errors", batch["errors"], "requests", target=Target(0, at_most=True)),
        row("  server CPU per item", batch["server_cpu_us_per_command"], "µs"),
        *(
            row(f"  peak RSS, API {process}", mb, "MB")
            for process, mb in http["peak_rss_mb"].items()
            if mb is not None
        ),
        row(
            f"Command bus in-process, {args.connections} callers",
            bus["commands_per_s"],
            "commands/s",
            LIBRARY_BATCH,
            base,
        ),
    ]
