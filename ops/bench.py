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
- The relay (part ``relay``) against a plain aiokafka producer (``ops/bench_relay.py``). Kafka is
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
with ``ops/local_postgres.start_postgres(fast=False)``, unless BENCH_DATABASE_URL names a
server; each part gets a fresh database, dropped afterwards. Timings are recorded, never
asserted.

    python ops/bench.py [--out var/bench] [--quick] [--parts http log memory]
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "ops")]

import local_kafka  # noqa: E402
import local_postgres  # noqa: E402
from bench_audit import part_audit  # noqa: E402
from bench_console import part_console  # noqa: E402
from bench_figures import Bench, Part, console  # noqa: E402
from bench_http import part_http  # noqa: E402
from bench_inbox import part_inbox  # noqa: E402
from bench_kafka import part_kafka  # noqa: E402
from bench_log import part_log  # noqa: E402
from bench_measures import peak_rss_mb  # noqa: E402
from bench_memory import part_memory  # noqa: E402
from bench_privacy import part_privacy  # noqa: E402
from bench_proposals import part_proposals  # noqa: E402
from bench_relay import part_relay  # noqa: E402
from bench_sql import sql  # noqa: E402
from bench_visible import part_visible  # noqa: E402

from services.processes.collector import settle_collector  # noqa: E402
from services.processes.settings import Settings  # noqa: E402
from services.store.opening import open_store  # noqa: E402

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


def shown(number: float | None, spec: str) -> str:
    """A figure with thousands marked, or a dash for a reading that could not be taken (a
    quick run's worker gone before it was read)."""
    return "—" if number is None else format(number, "," + spec)


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
        baseline = f"{shown(r['baseline_value'], '.0f')} ({r['baseline']})" if r["baseline"] else ""
        met = {True: "yes", False: "NO", None: ""}[r["met"]]
        value = shown(r["value"], ".1f").removesuffix(".0") + f" {r['unit']}"
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
            server = local_postgres.start_postgres(workdir, fast=False)
            server_url, args.pg_pid = server.url, server.pid
        args.kafka = os.environ.get("BENCH_KAFKA_BOOTSTRAP_SERVERS", "")
        if {"kafka", "relay", "memory"} & set(args.parts) and not args.kafka:
            workdir = workdir or Path(tempfile.mkdtemp(prefix="fl-bench-pg-"))
            kafka = local_kafka.start_kafka(workdir / "kafka")
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
