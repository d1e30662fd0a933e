#!/usr/bin/env python3
"""Benchmarks of Feedback Loop, each figure next to a baseline measured in the same
run on the same PostgreSQL server, so that the ratio, more than the machine, is what a reader
compares. Every figure is a row ``{name, value, unit, baseline, baseline_value, ratio, target,
met}`` (``met`` computed from the target), written to ``<out>/results.json`` with the machine's
core count and the git commit, and printed as a table.

- HTTP ingest (part ``http``): ``feedbackloop api`` as it runs by default (uvloop, httptools, a
  worker per core) in a subprocess, driven by ``wrk`` (compiled, so the client is not the
  bottleneck) with ``ops/wrk_record_feedback.lua``: 64 connections POST /factory/feedback, each
  request a new body and Idempotency-Key, for 60 s. Commands/s, p99, errors, the events appended in
  each second (the slowest beside the median: a stall shows), the server's CPU time per command
  (the API process and its workers, from /proc), and a command batch's mean time in each stage of
  the bus (the workers' metrics). Then POST /factory/feedback:batch with 100 items a request:
  items/s. Baseline of both: the same events saved straight through the eventsourcing library in
  batches of 100, one transaction each, 100,000 events: half before the HTTP runs and half after
  (``bracketing``). Also the command bus driven in-process (what HTTP adds on top of the bus),
  without a target.
- Command → read model visible (part ``visible``): an open loop of RecordFeedback at ``--rate``,
  and how long until a read with ``minPosition`` answers.
- Kafka ingest (part ``kafka``): RecordFeedback CloudEvents already on a topic of ``--partitions``
  (the service's default), applied exactly once by the real inbound consumer; baseline a plain
  aiokafka consumer reading the same topic.
- The relay (part ``relay``) against a plain aiokafka producer (``ops/bench_kafka.py``). Kafka is
  started here unless BENCH_KAFKA_BOOTSTRAP_SERVERS names a broker.
- Rebuild (part ``log``): ``feedbackloop rebuild`` of every read model from 1,000,000 events, run
  as a subprocess (with its default worker processes, one per core). Baseline: reading the
  notification log in pages of 5,000 and decoding every event, the part of any rebuild that no read
  model can avoid, once before the rebuild and once after (``bracketing``).
- Memory (part ``memory``, and the API's processes in part ``http``): the peak RSS of the rebuild,
  of its largest worker process and of ``feedbackloop relay`` with 1,000,000 and then 2,000,000
  events stored (``ops/bench_processes.py``); flat means at most 10 % more.
- The console (part ``console``, ``ops/bench_console.py``): ``feedbackloop demo`` into the
  fresh database, then every page of the console's navigation and the first item each lists,
  opened by a demo person signed in through the form, p50 and p95 of each against the API's
  JSON of the same data, measured alternately with it; p95 at most 300 ms.
- The Inbox at 10,000 reports (part ``inbox``, ``ops/bench_inbox.py``): written through the
  command bus in batches; the console's first, a filtered and a deep page against the API's
  same query and cursor.

Parts are functions ``(Bench) -> list[Row]`` in ``PARTS``; another module adds its own with
``PARTS[name] = part``. PostgreSQL runs durably (fsync and synchronous_commit on): started here
with ``ops/localservers.start_postgres(fast=False)``, unless BENCH_DATABASE_URL names a
server; each part gets a fresh database, dropped afterwards. Timings are recorded, never
asserted.

    python ops/bench.py [--out var/bench] [--quick] [--parts http log memory]
"""

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import platform
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from statistics import median
from typing import Any, NamedTuple
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import httpx
import psycopg
import uvloop
from prometheus_client.parser import text_string_to_metric_families
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "ops")]

import localservers  # noqa: E402
from bench_audit import audit_runs  # noqa: E402
from bench_console import load_demo, measure_comparison, measure_pages, standin  # noqa: E402
from bench_inbox import REVIEWER, measure_inbox  # noqa: E402
from bench_inbox import TENANT as INBOX_TENANT  # noqa: E402
from bench_inbox import fill as fill_inbox  # noqa: E402
from bench_kafka import HEAD, TENANT, bench_kafka, bench_relay, body, feedback_bus  # noqa: E402
from bench_privacy import drive_people, dropped, interleaved, two_logs  # noqa: E402
from bench_processes import (  # noqa: E402
    cpu_seconds,
    process_tree_rss,
    rebuild_process,
    relay_process,
)
from bench_proposals import bench_proposals  # noqa: E402
from eventsourcing.persistence import Mapper  # noqa: E402

from contracts.feedback import RecordFeedback  # noqa: E402
from services.bus.issued import Issued  # noqa: E402
from services.edge.auth import SCOPES, new_key  # noqa: E402
from services.feedback.domain import Feedback  # noqa: E402
from services.feedback.handlers import request_digest  # noqa: E402
from services.followers.decoding import decode  # noqa: E402
from services.processes.collector import settle_collector  # noqa: E402
from services.processes.settings import Settings  # noqa: E402
from services.store.event_store import EVENTS_TABLE, EventStore  # noqa: E402
from services.store.log_reading import read_log  # noqa: E402
from services.store.opening import open_store  # noqa: E402

console = Console(width=None if sys.stdout.isatty() else 120)


def aggregate(n: int) -> Feedback:
    command = RecordFeedback.model_validate(body(n))
    return Feedback.record(
        command,
        feedback_id=uuid.uuid4(),
        tenant_id=TENANT,
        given_by="bench",
        given_at=datetime.now(UTC),
        command_id=str(uuid.uuid4()),
        request_digest=request_digest(command),
    )


def latency_ms(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    rank = {"p50": 50, "p95": 95, "p99": 99, "max": 100}  # nearest-rank percentiles
    return {
        k: round(ordered[max(0, round(p / 100 * len(ordered)) - 1)] * 1000, 2)
        for k, p in rank.items()
    }


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # KiB on Linux


def cpu_used(before: dict[str, float | None], after: dict[str, float | None]) -> dict[str, Any]:
    return {k: None if b is None else round((after[k] or 0) - b, 2) for k, b in before.items()}


def machine_busy() -> float:
    """CPU seconds spent busy so far, all CPUs and processes, ours or not (/proc/stat)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(values) - values[3] - values[4]) / os.sysconf("SC_CLK_TCK")


async def fetchval(url: str, sql: str) -> Any:
    conn = await asyncpg.connect(url)
    try:
        return await conn.fetchval(sql)
    finally:
        await conn.close()


def sql(url: str, statement: str) -> Any:
    return asyncio.run(fetchval(url, statement))


# How many transactions wrote the events so far: the distinct xmin of their rows.
TRANSACTIONS = f"SELECT count(DISTINCT xmin::text) FROM {EVENTS_TABLE}"


def append_transactions(url: str) -> int:
    return int(sql(url, TRANSACTIONS))


# ------------------------------------------------------------------- HTTP vs library

WRK_SCRIPT = ROOT / "ops" / "wrk_record_feedback.lua"


def free_ports(count: int) -> int:
    """The first of ``count`` loopback ports in a row that were free a moment ago."""
    while True:
        first = localservers.free_port()
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
    port, count = localservers.free_port(), workers or os.cpu_count() or 1
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
    log_tail = localservers._tail(out / "api.log", 15)
    raise RuntimeError(f"feedbackloop api did not come up; {out / 'api.log'} ends:\n{log_tail}")


def stop_process(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wrk(
    base: str, key: str, seconds: int, connections: int, batch: int = 0, delay_ms: int = 0
) -> dict[str, Any]:
    """One run of wrk with the Lua script; its summary line, as numbers."""
    env = os.environ | {"BENCH_KEY": key, "BENCH_RUN": uuid.uuid4().hex[:10]}
    env |= {"BENCH_BATCH": str(batch), "BENCH_DELAY_MS": str(delay_ms)}
    threads = str(min(2, connections))
    command = [
        "wrk",
        "-t",
        threads,
        "-c",
        str(connections),
        "-d",
        f"{seconds}s",
        "--timeout",
        "10s",
    ]
    done = subprocess.run(
        [*command, "-s", str(WRK_SCRIPT), base], env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed: {done.stderr or done.stdout}")
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    summary["errors"] = sum(
        summary[k]
        for k in ("connect_errors", "read_errors", "write_errors", "status_errors", "timeouts")
    )
    summary["seconds"] = summary["duration_us"] / 1e6
    return summary


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

    t0 = time.perf_counter()
    try:
        await asyncio.gather(*(worker() for _ in range(clients)))
    finally:
        await bus.aclose()
        await loop_store.close()
    seconds = time.perf_counter() - t0
    return {
        "commands": total,
        "coroutines": clients,
        "seconds": round(seconds, 3),
        "commands_per_s": round(total / seconds, 1),
        "latency_ms": latency_ms(latencies),
        "append_transactions": bus.transactions,
        "events_per_transaction": round(total / max(1, bus.transactions), 1),
    }


def save_timed(store: EventStore, url: str, count: int, size: int) -> dict[str, Any]:
    aggregates = [aggregate(n) for n in range(count)]  # built before the clock starts
    transactions = append_transactions(url)
    t0 = time.perf_counter()
    for i in range(0, count, size):
        store.save(*aggregates[i : i + size])
    seconds = time.perf_counter() - t0
    return {
        "events": count,
        "batch_size": size,
        "seconds": round(seconds, 3),
        "events_per_s": round(count / seconds, 1),
        "transactions": append_transactions(url) - transactions,
    }


def bracketing(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """A baseline measured before its figure and again after it: events/s over both, so that
    it sees the machine as the figure did (each half is kept). Measured once, in its own few
    seconds, it moves with the machine's state more than the figure does with the code
    (docs/benchmarks.md has the runs that showed it)."""
    events, seconds = before["events"] + after["events"], before["seconds"] + after["seconds"]
    return {
        "events": events,
        "seconds": round(seconds, 3),
        "events_per_s": round(events / seconds, 1),
        "before": before,
        "after": after,
    }


# --------------------------------------------------------- rebuild vs read-and-decode


def fill(store: EventStore, total: int, batch: int = 500) -> float:
    t0 = time.perf_counter()
    for i in range(0, total, batch):
        store.save(*(aggregate(n) for n in range(i, min(total, i + batch))))
    return round(time.perf_counter() - t0, 2)


def bench_read_decode(
    store: EventStore,
    page: int = 5000,
    after: int = 0,
    upto: int | None = None,
    read: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The rebuild's baseline: the log read page by page and every event decoded, by the
    fastest reader the service has (``read_log`` and ``decode``, which the rebuild and every
    follower use), so that a faster read counts for both sides. ``after``/``upto``: only those
    positions; ``read``: attributes read of every event that has them (a sealed one opens)."""
    with store.recorder.datastore.get_connection() as conn:  # type: ignore[attr-defined]
        topics = [
            row["topic"] for row in conn.execute(f"SELECT DISTINCT topic FROM {EVENTS_TABLE}")
        ]
    decoded, position = 0, after
    t0 = time.perf_counter()
    head = upto or store.recorder.max_notification_id() or 0  # read once, as the rebuild does
    while True:
        position, notifications = read_log(store, position, page, topics, head)
        if not notifications:
            break
        for notification in notifications:
            event = decode(store, notification).event
            for name in read:
                getattr(event, name, None)
        decoded += len(notifications)
    seconds = time.perf_counter() - t0
    return {
        "events": decoded,
        "page": page,
        "seconds": round(seconds, 3),
        "events_per_s": round(decoded / seconds, 1),
        "peak_rss_mb_after": peak_rss_mb(),
    }


# ------------------------------------------------------------------------------ rows


@dataclass(frozen=True)
class Target:
    """What a figure must reach: its value (or its ratio to the baseline) at least / at most
    ``bound``."""

    bound: float
    of: str = "value"  # or "ratio"
    at_most: bool = False

    def met(self, value: float, ratio: float | None) -> bool | None:
        measured = ratio if self.of == "ratio" else value
        if measured is None:
            return None
        return measured <= self.bound if self.at_most else measured >= self.bound

    def text(self, unit: str) -> str:
        sign = "≤" if self.at_most else "≥"
        return (
            f"ratio {sign} {self.bound:g}"
            if self.of == "ratio"
            else f"{sign} {self.bound:g} {unit}"
        )


def row(
    name: str,
    value: float,
    unit: str,
    baseline: str | None = None,
    baseline_value: float | None = None,
    target: Target | None = None,
    ratio: float | None = None,
) -> dict[str, Any]:
    """One figure of the results: the keys of every row, ``met`` computed here. ``ratio``:
    given by a figure measured in turns with its baseline (``bench_privacy.interleaved``),
    else the value's to the baseline's."""
    if ratio is None:
        ratio = round(value / baseline_value, 3) if baseline_value else None
    return {
        "name": name,
        "value": value,
        "unit": unit,
        "baseline": baseline,
        "baseline_value": baseline_value,
        "ratio": ratio,
        "target": target.text(unit) if target else None,
        "met": target.met(value, ratio) if target else None,
    }


@dataclass
class Bench:
    """What a part gets: a fresh database (store and URL), the options, where to write, and
    where to leave its raw measurements (``details``)."""

    store: EventStore
    url: str
    args: argparse.Namespace
    out: Path
    details: dict[str, Any] = field(default_factory=dict)


Part = Callable[[Bench], list[dict[str, Any]]]

LIBRARY_BATCH = "library appends, batches of 100"
# The command bus's stages (``services.observing.metrics.BUS_SECONDS``), as the table names them.
BUS_STAGES = (
    ("queued", "waiting to be taken"),
    ("decide", "deciding, a hand-over to a thread included"),
    ("append", "appending, a hand-over to a thread included"),
)


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


def settle_log(url: str) -> None:
    """The freshly filled log as a long-lived one is, for the figure and its baseline alike:
    vacuumed (hint bits set, statistics known) and in the cache. Unsettled, the first reader
    of a million new rows set their hint bits and met autovacuum at its work: the same rebuild
    took 92 s in one run and 137 s in the next, its own CPU the same."""
    sql(url, f"VACUUM ANALYZE {EVENTS_TABLE}")
    sql(url, f"SELECT sum(length(state)) FROM {EVENTS_TABLE}")


def part_log(bench: Bench) -> list[dict[str, Any]]:
    """6. ``feedbackloop rebuild`` of every read model, against reading and decoding the log."""
    store, url, args = bench.store, bench.url, bench.args
    console.print(f"[bold]6.[/] filling {args.events:,} events (not timed) …")
    fill_seconds = fill(store, args.events)
    settle_log(url)
    console.print("   reading and decoding the log, rebuilding, reading and decoding again …")
    before = bench_read_decode(store)
    rebuilt = rebuild_process(url, bench.out / "rebuild.log") | {"fill_s": fill_seconds}
    rebuilt["events_per_s"] = round(args.events / rebuilt["seconds"], 1)
    read = bracketing(before, bench_read_decode(store))
    bench.details |= {"rebuild_every_read_model": rebuilt, "read_and_decode_log": read}
    name = f"Rebuild of every read model, {args.events:,} events (feedbackloop rebuild)"
    decode = "read + decode the log"
    return [
        row(
            name,
            rebuilt["events_per_s"],
            "events/s",
            decode,
            read["events_per_s"],
            Target(0.8, of="ratio"),
        ),
        row("  same, absolute", rebuilt["events_per_s"], "events/s", target=Target(25_000)),
        row("  CPU per event, every process", 1e6 * rebuilt["cpu_s"] / args.events, "µs"),
        row("  peak RSS of the rebuild", rebuilt["peak_rss_mb"], "MB"),
        *(  # a log too short for worker processes is rebuilt without any
            [row(f"  peak RSS of its worker processes ({workers})", peak, "MB")]
            if (workers := rebuilt["workers"]) and (peak := rebuilt["workers_peak_rss_mb"])
            else []
        ),
    ]


def part_memory(bench: Bench) -> list[dict[str, Any]]:
    """7. The projector's and the relay's peak memory with ``history`` and then twice as many
    events stored: flat (at most 10 % more) when neither holds the history."""
    store, url, args, out = bench.store, bench.url, bench.args, bench.out
    peaks: dict[int, dict[str, Any]] = {}
    for stored in (args.history, 2 * args.history):
        console.print(f"[bold]7.[/] {stored:,} events stored (filling, not timed) …")
        fill(store, args.history)
        settle_log(url)
        projector = rebuild_process(url, out / "memory-rebuild.log")
        relay = asyncio.run(relay_process(url, args.kafka, args.window, out / "memory-relay.log"))
        peaks[stored] = {"projector": projector, "relay": relay}
    bench.details |= {"memory": peaks}
    low, high = args.history, 2 * args.history
    rows = []
    for process, what, peak in (
        ("projector", "rebuild of every read model", "peak_rss_mb"),
        ("projector", "rebuild's worker processes, the largest", "workers_peak_rss_mb"),
        ("relay", f"relay of the newest {args.window:,} events", "peak_rss_mb"),
    ):
        at_low, at_high = peaks[low][process][peak], peaks[high][process][peak]
        rows.append(row(f"Peak RSS, {what}, {low:,} events stored", at_low, "MB"))
        rows.append(
            row(
                f"  same, {high:,} events stored",
                at_high,
                "MB",
                f"{low:,} events stored",
                at_low,
                Target(1.1, of="ratio", at_most=True),
            )
        )
    return rows


# ---------------------------------------------------------- command → read model visible


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


def part_kafka(bench: Bench) -> list[dict[str, Any]]:
    """3. The command topic, applied exactly once (``ops/bench_kafka.py``): as production runs
    it (``--inbound-processes`` ``feedbackloop inbound`` processes of one group), and one
    consumer in this process (what one process carries)."""
    args = bench.args
    console.print(f"[bold]3.[/] {args.commands:,} RecordFeedback CloudEvents on Kafka …")
    results = asyncio.run(
        bench_kafka(
            bench.store,
            bench.url,
            args.kafka,
            args.commands,
            args.inbound_processes,
            args.partitions,
            bench.out / "inbound",
        )
    )
    bench.details |= results
    inbound, plain = results["kafka_inbound"], results["kafka_plain_consumer"]
    spread = results["kafka_inbound_processes"]
    processes = spread["processes"]
    baseline = "one plain aiokafka consumer, read + decode"
    return [
        row(
            f"Kafka command topic, {args.commands:,} RecordFeedback applied exactly once by "
            f"{processes} `feedbackloop inbound` processes of one group, "
            f"{spread['partitions']} partitions, first sent → last applied",
            round(spread["commands_per_s"], 1),
            "commands/s",
            baseline,
            round(plain["messages_per_s"], 1),
            Target(10_000),
        ),
        row(
            "  same, against one plain aiokafka consumer",
            round(spread["commands_per_s"], 1),
            "commands/s",
            baseline,
            round(plain["messages_per_s"], 1),
            Target(0.4, of="ratio"),
        ),
        row("  exactly once", int(spread["exactly_once"]), "bool", target=Target(1)),
        row(
            "  CPU per command, the inbound processes together", spread["cpu_us_per_command"], "µs"
        ),
        row(
            "  per process: one consumer in the bench process, its start → last applied",
            round(inbound["commands_per_s"], 1),
            "commands/s",
            baseline,
            round(plain["messages_per_s"], 1),
        ),
        row("    exactly once", int(inbound["exactly_once"]), "bool", target=Target(1)),
        row("    CPU per command, the bench process", inbound["cpu_us_per_command"], "µs"),
    ]


def part_relay(bench: Bench) -> list[dict[str, Any]]:
    """5. The relay to Kafka (``ops/bench_kafka.py``)."""
    args = bench.args
    console.print(f"[bold]5.[/] relaying {args.relay_events:,} FeedbackRecorded events …")
    results = asyncio.run(
        bench_relay(bench.store, bench.url, args.kafka, args.relay_events, bench.out)
    )
    bench.details |= results
    relay, plain = results["relay"], results["relay_plain_producer"]
    shares = results["relay_two_shares"]
    value = round(relay["events_per_s"], 1)
    complete = relay["on_topic"] == relay["events"] == relay["published"]
    shared = shares["on_topic"] == shares["events"]
    return [
        row(
            f"Relay to Kafka, {args.relay_events:,} events published and acknowledged",
            value,
            "events/s",
            "plain aiokafka producer, same messages, idempotent, acks=all",
            round(plain["messages_per_s"], 1),
            Target(0.8, of="ratio"),
        ),
        row("  same, absolute", value, "events/s", target=Target(10_000)),
        row("  the relay's CPU per event", relay["cpu_us_per_event"], "µs"),
        row("  every event on the topic once", int(complete), "bool", target=Target(1)),
        row(
            "Relay, two shares in two processes (--share 1/2, 2/2), same events",
            round(shares["events_per_s"], 1),
            "events/s",
            "plain aiokafka producer, same messages, idempotent, acks=all",
            round(plain["messages_per_s"], 1),
            Target(0.8, of="ratio"),
        ),
        row("  the two shares' CPU per event", shares["cpu_us_per_event"], "µs"),
        row("  every event on the shares' topic once", int(shared), "bool", target=Target(1)),
    ]


def part_privacy(bench: Bench) -> list[dict[str, Any]]:
    """9. What sealing personal fields costs (decisions D42, D290–D292), each figure against the
    same work through the plain mapper (the same transcoder, nothing sealed or opened),
    interleaved with it (``ops/bench_privacy.py``): RecordFeedback through the command bus
    in-process (what every HTTP and Kafka command runs; its ``givenBy`` is sealed); the log
    those commands wrote read and decoded as the log's readers decode it (a sealed field opened
    where it is read), then with every ``givenBy`` read; and ``feedbackloop rebuild`` of a
    sealed log against the same log plain."""
    store, url, args = bench.store, bench.url, bench.args
    sealing, plain = store.mapper, Mapper(store.mapper.transcoder)
    total, clients, people = args.privacy_commands, args.connections, 1000
    console.print(
        f"[bold]9.[/] sealing: {total // 2:,} commands of {people} people a run, in turns …"
    )
    numbers, written = itertools.count(0, 10**7), list[tuple[int, int]]()

    def through(mapper: Mapper[Any]) -> Callable[[int], dict[str, Any]]:
        def run(_: int) -> dict[str, Any]:
            store.mapper = mapper
            first = store.recorder.max_notification_id() or 0
            try:
                n = next(numbers)
                return asyncio.run(drive_people(store, url, n, total // 2, clients, people))
            finally:
                store.mapper = sealing
                if mapper is sealing:
                    written.append((first, store.recorder.max_notification_id() or 0))

        return run

    bus = interleaved(through(plain), through(sealing))
    settle_log(url)

    def decoded(mapper: Mapper[Any], read: tuple[str, ...] = ()) -> Callable[[int], dict[str, Any]]:
        """The rows the sealed runs wrote, read through ``mapper``, at least 40,000 a round
        (a round of a few milliseconds measures the machine's moment)."""

        def run(_: int) -> dict[str, Any]:
            store.mapper, runs = mapper, []
            try:
                while sum(r["events"] for r in runs) < 40_000:
                    runs += [
                        bench_read_decode(store, after=a, upto=b, read=read) for a, b in written
                    ]
            finally:
                store.mapper = sealing
            events, seconds = sum(r["events"] for r in runs), sum(r["seconds"] for r in runs)
            return {
                "events": events,
                "seconds": seconds,
                "events_per_s": round(events / seconds, 1),
            }

        return run

    lazily = interleaved(decoded(plain), decoded(sealing))
    opened = interleaved(decoded(plain, ("given_by",)), decoded(sealing, ("given_by",)))
    console.print(f"   and {args.privacy_events:,} events rebuilt, plain and sealed in turns …")
    logs = two_logs(url, args.privacy_events, people)
    try:
        for log_url in logs.values():
            settle_log(log_url)

        def rebuilt(side: str) -> Callable[[int], dict[str, Any]]:
            def run(n: int) -> dict[str, Any]:
                done = rebuild_process(logs[side], bench.out / f"rebuild-{side}-{n}.log")
                return done | {"events_per_s": round(args.privacy_events / done["seconds"], 1)}

            return run

        rebuild = interleaved(rebuilt("plain"), rebuilt("sealed"))
    finally:
        for log_url in logs.values():
            dropped(url, urlsplit(log_url).path.lstrip("/"))
    bench.details |= {"sealing": {"bus": bus, "decode": lazily, "decode_opened": opened,
                                  "rebuild": rebuild}}  # fmt: skip
    interleaving = "the same, plain mapper (in turns, median)"
    return [
        row(
            "RecordFeedback through the bus, givenBy sealed",
            bus["value"],
            "commands/s",
            interleaving,
            bus["baseline"],
            Target(0.9, of="ratio"),  # sealing may cost at most 10 % (D292)
            ratio=bus["ratio"],
        ),
        row(
            "Read + decode the log as its readers do (sealed fields opened where read)",
            lazily["value"],
            "events/s",
            interleaving,
            lazily["baseline"],
            Target(0.9, of="ratio"),
            ratio=lazily["ratio"],
        ),
        row(
            "  the same, every givenBy read (opened)",
            opened["value"],
            "events/s",
            interleaving,
            opened["baseline"],
            ratio=opened["ratio"],
        ),
        row(
            f"feedbackloop rebuild of a sealed log, {args.privacy_events:,} events",
            rebuild["value"],
            "events/s",
            "the same log plain (in turns, median)",
            rebuild["baseline"],
            Target(0.9, of="ratio"),
            ratio=rebuild["ratio"],
        ),
    ]


def part_audit(bench: Bench) -> list[dict[str, Any]]:
    """10. What the audit trail costs (``ops/bench_audit.py``, decisions D223, D283): the bus
    with its audit against the same bus without, one command a call and batches of 100; then
    HTTP, the single route and the batch route, with the audit and without."""
    store, url, args = bench.store, bench.url, bench.args
    total = args.privacy_commands
    console.print(f"[bold]10.[/] audit: {total:,} commands with and without, single and batched …")
    rows, details = [], {}
    for name, clients, batch in (("single", args.connections, 1), ("batch", 8, 100)):
        before, audited, after = audit_runs(store, url, total, clients, batch)
        plain = bracketing(before, after)
        details[name] = {"audited": audited, "unaudited": plain}
        rows.append(
            row(
                f"RecordFeedback through the bus with its audit, {name} "
                f"({clients} callers, {batch} a call)",
                audited["events_per_s"],
                "commands/s",
                "the same, no audit",
                plain["events_per_s"],
                Target(0.95, of="ratio"),  # the audit may cost at most 5 % (D283)
            )
        )
    http_rows, details["http"] = http_audit_runs(bench)
    bench.details |= {"audit": details}
    return rows + http_rows


UNAUDITED_API = [sys.executable, str(ROOT / "ops" / "bench_unaudited_api.py")]


def http_audit_runs(bench: Bench) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """HTTP with the audit against the same API without it (``ops/bench_unaudited_api.py``,
    a composition for the bench only: the service has no switch, decisions D283): without
    (half the time), with (whole), without (half), each a fresh ``feedbackloop api`` on the
    part's database, wrk's single route then its batch route, as part ``http`` drives them."""
    args = bench.args
    half = argparse.Namespace(**vars(args))
    half.seconds, half.batch_seconds = max(2, args.seconds // 2), max(2, args.batch_seconds // 2)
    console.print(
        f"   HTTP without the audit, with it, without again ({args.seconds} s and "
        f"{args.batch_seconds} s with it) …"
    )
    before = bench_http(bench.url, half, bench.out, UNAUDITED_API)
    audited = bench_http(bench.url, args, bench.out)
    after = bench_http(bench.url, half, bench.out, UNAUDITED_API)
    rows, details = [], {}
    single = ("single", "HTTP RecordFeedback with the audit", args.connections)
    batch = (
        "batch",
        f"HTTP batch with the audit, {args.batch} items a request",
        args.batch_connections,
    )
    for name, figure, connections in (single, batch):
        plain = bracketing(*(counted(run[name]) for run in (before, after)))
        details[name] = {"audited": audited[name], "unaudited": plain}
        rows.append(
            row(
                f"{figure} ({connections} connections)",
                audited[name]["commands_per_s"],
                "commands/s",
                "the same API, no audit",
                plain["events_per_s"],
                Target(0.95, of="ratio"),  # the audit may cost at most 5 % (D283)
            )
        )
        rows.append(
            row(
                "  the API's CPU per command (its processes, not PostgreSQL's)",
                audited[name]["server_cpu_us_per_command"],
                "µs",
                "the same, no audit",
                median(run[name]["server_cpu_us_per_command"] for run in (before, after)),
            )
        )
    return rows, details


def counted(run: dict[str, Any]) -> dict[str, Any]:
    """An HTTP run as ``bracketing`` adds runs up: its commands and its seconds."""
    return {"events": run["commands"], "seconds": run["seconds"]}


def part_proposals(bench: Bench) -> list[dict[str, Any]]:
    """8. The daily proposal run with 10,000 and with ``--evidence`` evidence events behind it
    (``ops/bench_proposals.py``): flat means at most 50 % more."""
    sizes = (10_000, bench.args.evidence)
    console.print(f"[bold]8.[/] the proposal run with {sizes[0]:,} and {sizes[1]:,} evidence …")
    small, large = asyncio.run(bench_proposals(bench.url, sizes))
    bench.details |= {"proposal_runs": [small, large]}
    ready = small["ready_clusters"]
    return [
        row(
            f"Proposal run, {ready} ready clusters, {sizes[1]:,} evidence events behind it",
            round(large["median_s"] * 1000, 1),
            "ms",
            f"same, {sizes[0]:,} evidence events",
            round(small["median_s"] * 1000, 1),
            Target(1.5, of="ratio", at_most=True),
        ),
    ]


def part_console(bench: Bench) -> list[dict[str, Any]]:
    """10. Every page of the console's navigation, and the first item each lists, with the
    demo's data (``ops/bench_console.py``): p95 at most 300 ms, beside the API's JSON of the
    same data as the same person, measured alternately with it."""
    repeats = bench.args.page_repeats
    console.print(f"[bold]10.[/] the console: `feedbackloop demo`, then {repeats} GETs a page …")
    data = Path(tempfile.mkdtemp(prefix="fl-bench-demo-"))
    try:
        people = load_demo(bench.url, data, bench.out / "demo.log")
        keys = (data / "demo-api-keys.json").read_text()
    finally:
        shutil.rmtree(data, ignore_errors=True)
    with standin() as agent:  # a comparison runs its conversations
        # One worker: the pages are opened one after the other, by one client at a time.
        api = start_api(bench.url, keys, bench.out, workers=1, settings=agent)
        try:
            pages = measure_pages(api.base, people, repeats)
            pages.append(measure_comparison(api.base, people, repeats))
        finally:
            stop_process(api.process)
    bench.details |= {"console_pages": pages}
    return [
        figure
        for page in pages
        for figure in (
            row(
                f"Console: {page['page']} ({page['person']}), p95",
                page["page_ms"]["p95"],
                "ms",
                f"API GET {page['api']}",
                page["api_ms"]["p95"],
                Target(300, at_most=True),
            ),
            row("  p50", page["page_ms"]["p50"], "ms", "the API's p50", page["api_ms"]["p50"]),
        )
    ]


def part_inbox(bench: Bench) -> list[dict[str, Any]]:
    """11. The console's Inbox with ``--inbox-reports`` reports in one tenant
    (``ops/bench_inbox.py``): the first page, a filtered one and one deep in the cursor chain,
    each beside the API's JSON of the same query and cursor."""
    count, repeats = bench.args.inbox_reports, bench.args.page_repeats
    console.print(f"[bold]11.[/] the Inbox: {count:,} reports through the bus, then the pages …")
    filled = fill_inbox(bench.url, count)
    key, entry = new_key(INBOX_TENANT, REVIEWER, list(SCOPES), roles=["Reviewer"])
    api = start_api(bench.url, json.dumps([entry]), bench.out, workers=1)
    try:
        pages = measure_inbox(api.base, key, repeats, count)
    finally:
        stop_process(api.process)
    bench.details |= {"inbox_filled": filled, "inbox_pages": pages}
    return [
        row(
            f"Console Inbox, {count:,} reports: {page['page']}, p95",
            page["page_ms"]["p95"],
            "ms",
            "API GET /factory/reports/inbox, same query",
            page["api_ms"]["p95"],
            Target(300, at_most=True),
        )
        for page in pages
    ]


# Each part a function returning rows; another module adds its own (``PARTS["x"] = part``).
PARTS: dict[str, Part] = {
    "http": part_http,
    "log": part_log,
    "visible": part_visible,
    "kafka": part_kafka,
    "relay": part_relay,
    "memory": part_memory,
    "privacy": part_privacy,
    "audit": part_audit,
    "proposals": part_proposals,
    "console": part_console,
    "inbox": part_inbox,
}


# ------------------------------------------------------------------------------ main


def code_version() -> dict[str, Any]:
    def git(*argv: str) -> str | None:
        done = subprocess.run(["git", "-C", str(ROOT), *argv], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else None

    status = git("status", "--porcelain", "--untracked-files=no")
    return {"root": str(ROOT), "commit": git("rev-parse", "HEAD"), "dirty": bool(status)}


def run(server_url: str, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    settings = ("server_version", "fsync", "synchronous_commit", "shared_buffers")
    code = code_version()
    results: dict[str, Any] = {
        "cores": os.cpu_count(),
        "commit": code["commit"],
        "results": [],
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
        }
        | {f"postgres_{s}": sql(server_url, f"SHOW {s}") for s in settings},
        "code": code,
        "details": {},
    }
    for part in args.parts:
        name = f"bench_{part}_{uuid.uuid4().hex[:8]}"
        sql(server_url, f"CREATE DATABASE {name}")
        url = urlunsplit(urlsplit(server_url)._replace(path=f"/{name}"))
        bench = Bench(open_store(url), url, args, out)
        try:
            results["results"] += PARTS[part](bench)
        finally:
            bench.store.close()
            results["details"] |= bench.details
            sql(server_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    results["peak_rss_mb"] = peak_rss_mb()
    return results


def print_table(results: dict[str, Any]) -> None:
    m = results["machine"]
    version = m["postgres_server_version"].split()[0]
    commit = (results["commit"] or "?")[:10] + (" (dirty)" if results["code"]["dirty"] else "")
    title = f"Feedback Loop bench: {results['cores']} cores, PostgreSQL {version}"
    table = Table(title=f"{title}, fsync {m['postgres_fsync']}, commit {commit}")
    for column in ("figure", "value", "baseline", "ratio", "target", "met"):
        table.add_column(column, justify="left" if column in ("figure", "baseline") else "right")
    for r in results["results"]:
        if not r["name"].startswith(" "):
            table.add_section()
        baseline = f"{r['baseline_value']:,.0f} ({r['baseline']})" if r["baseline"] else ""
        met = {True: "yes", False: "NO", None: ""}[r["met"]]
        value = f"{r['value']:,.1f}".removesuffix(".0") + f" {r['unit']}"
        table.add_row(r["name"], value, baseline, str(r["ratio"] or ""), r["target"] or "", met)
    console.print(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Measure HTTP ingest (wrk, 64 connections) and the batch route against the "
        "eventsourcing library appending in batches of 100, a rebuild against reading and "
        "decoding the log, and Kafka ingest against a plain consumer; each pair on the same "
        "PostgreSQL in the same run. Starts a durable PostgreSQL (fsync on) unless "
        "BENCH_DATABASE_URL is set. Writes <out>/results.json (and <out>/api.log) and prints "
        "a table.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--out", type=Path, default=Path("var/bench"), help="output directory")
    parser.add_argument("--quick", action="store_true", help="10 s runs, 20,000 events")
    parser.add_argument("--connections", type=int, default=64, help="wrk connections")
    parser.add_argument("--seconds", type=int, help="HTTP run [60; quick 10]")
    parser.add_argument(
        "--api-workers",
        type=int,
        help="worker processes of `feedbackloop api` in the HTTP part [its default: a core each]",
    )
    parser.add_argument("--batch", type=int, default=100, help="items per batch request")
    parser.add_argument("--batch-connections", type=int, default=8, help="wrk connections")
    parser.add_argument("--batch-seconds", type=int, help="batch run [30; quick 10]")
    parser.add_argument("--events", type=int, help="events to rebuild [1,000,000; quick 20,000]")
    parser.add_argument(
        "--history",
        type=int,
        help="events stored before the memory part's first reading, then twice as many "
        "[1,000,000; quick 20,000]",
    )
    parser.add_argument("--window", type=int, help="events the relay publishes [20,000; 5,000]")
    parser.add_argument("--rate", type=int, default=500, help="commands/s of the visible part")
    parser.add_argument("--commands", type=int, help="Kafka commands [60,000; quick 2,000]")
    parser.add_argument(
        "--inbound-processes",
        type=int,
        default=os.cpu_count() or 1,
        help="`feedbackloop inbound` processes of the Kafka figure [the cores]",
    )
    parser.add_argument(
        "--partitions",
        type=int,
        default=Settings().topic_partitions,
        help="partitions of the Kafka figure's command topic [the service's default, "
        "FEEDBACKLOOP_TOPIC_PARTITIONS]",
    )
    parser.add_argument("--relay-events", type=int, help="events to relay [50,000; quick 10,000]")
    parser.add_argument(
        "--privacy-commands", type=int, help="commands of the sealing part [40,000; quick 4,000]"
    )
    parser.add_argument(
        "--privacy-events",
        type=int,
        help="events of each log the sealing part rebuilds [200,000; quick 20,000]",
    )
    parser.add_argument(
        "--evidence",
        type=int,
        help="evidence events behind the larger proposal run [1,000,000; quick 100,000]",
    )
    parser.add_argument(
        "--page-repeats", type=int, help="timed GETs of each console page [100; quick 20]"
    )
    parser.add_argument(
        "--inbox-reports", type=int, help="reports of the inbox part [10,000; quick 2,000]"
    )
    parser.add_argument("--parts", nargs="+", choices=list(PARTS), default=list(PARTS))
    args = parser.parse_args(argv)
    # 60,000: a sustained rate, about ten seconds (5,000 took a second and a half, mostly start
    # and end; 20,000 about three).
    args.commands = args.commands or (2_000 if args.quick else 60_000)
    args.privacy_commands = args.privacy_commands or (4_000 if args.quick else 40_000)
    args.privacy_events = args.privacy_events or (20_000 if args.quick else 200_000)
    args.seconds = args.seconds or (10 if args.quick else 60)
    args.batch_seconds = args.batch_seconds or (10 if args.quick else 30)
    args.events = args.events or (20_000 if args.quick else 1_000_000)
    args.evidence = args.evidence or (100_000 if args.quick else 1_000_000)
    args.history = args.history or (20_000 if args.quick else 1_000_000)
    args.window = args.window or (5_000 if args.quick else 20_000)
    args.relay_events = args.relay_events or (10_000 if args.quick else 50_000)
    args.library_events = 5_000 if args.quick else 100_000
    args.page_repeats = args.page_repeats or (20 if args.quick else 100)
    args.inbox_reports = args.inbox_reports or (2_000 if args.quick else 10_000)
    args.bus_commands = 1_000 if args.quick else 5_000
    args.pg_pid = None  # known when PostgreSQL is started here
    if {"http", "audit"} & set(args.parts) and shutil.which("wrk") is None:
        parser.error("wrk is not installed: `make bench` installs it (apt-get install wrk)")
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)

    started, t0 = datetime.now(UTC), time.monotonic()
    server, workdir, kafka = None, None, None
    try:
        if not (server_url := os.environ.get("BENCH_DATABASE_URL", "")):
            workdir = Path(tempfile.mkdtemp(prefix="fl-bench-pg-"))
            server = localservers.start_postgres(workdir, fast=False)
            server_url, args.pg_pid = server.url, server.pid
        args.kafka = os.environ.get("BENCH_KAFKA_BOOTSTRAP_SERVERS", "")
        if {"kafka", "relay", "memory"} & set(args.parts) and not args.kafka:
            workdir = workdir or Path(tempfile.mkdtemp(prefix="fl-bench-pg-"))
            kafka = localservers.start_kafka(workdir / "kafka")
            args.kafka = kafka.bootstrap
        # The service's processes keep start-up out of the collector; so does this one, where
        # the baselines and the in-process figures (Kafka, relay) run.
        settle_collector()
        results = run(server_url, args, out)
    finally:
        if kafka is not None:
            kafka.stop()
        if server is not None:
            server.stop()
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
    config = (
        "quick",
        "parts",
        "connections",
        "seconds",
        "api_workers",
        "batch",
        "batch_connections",
    )
    results["config"] = {k: getattr(args, k) for k in config} | {
        "batch_seconds": args.batch_seconds,
        "events": args.events,
        "commands": args.commands,
        "postgres": "started here, fsync on" if server else "BENCH_DATABASE_URL",
        "kafka": "started here" if kafka else "BENCH_KAFKA_BOOTSTRAP_SERVERS",
    }
    results["started_at"] = started.isoformat(timespec="seconds")
    results["duration_s"] = round(time.monotonic() - t0, 1)
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    print_table(results)
    console.print(f"wrote {out / 'results.json'} in {results['duration_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
