#!/usr/bin/env python3
"""Benchmarks of Feedback Loop, each figure next to a baseline measured in the same run on the
same PostgreSQL server, so that the ratio, more than the machine, is what a reader compares.

1. RecordFeedback over HTTP: ``feedbackloop api`` runs in a subprocess (the clients do not share
   its event loop, and its CPU time is read apart), and 32 concurrent httpx clients POST
   /factory/feedback. Requests/s, p50/p95/p99 latency, errors, and how many events each append
   transaction carried (the distinct ``xmin`` of the rows: group commit at work).
   Baseline: the same number of events saved straight through the eventsourcing library in
   batches of 100, one transaction each: the ceiling group commit aims at. Also single-event
   saves (what group commit saves us from) and the command bus driven in-process by as many
   coroutines as there are clients (what HTTP adds on top of the bus).
2. Rebuilding the feedback list (``projections.runner.rebuild``) from 100,000 events.
   Baseline: reading the notification log in pages of 5,000 and decoding every event, the
   part of any rebuild that no read model can avoid.
3. Kafka ingest: RecordFeedback CloudEvents already on a 3-partition topic, applied exactly once
   by the real inbound consumer (``services.inbound.InboundConsumer``: parse, bounds, receipts,
   one transaction per partition's poll), commands/s from its start to the last one settled;
   checked afterwards: one feedback and one receipt per command. Baseline: a plain aiokafka
   consumer of a fresh group reading the same topic and decoding each JSON value, nothing
   stored. Kafka is started here unless BENCH_KAFKA_BOOTSTRAP_SERVERS names a broker.

PostgreSQL runs durably (fsync and synchronous_commit on): started here with
``ops/localservers.start_postgres(fast=False)``, unless BENCH_DATABASE_URL names a server; each
part gets a fresh database, dropped afterwards. Timings are recorded, never asserted.

    python ops/bench.py [--out var/bench] [--quick]
"""

import argparse
import asyncio
import itertools
import json
import os
import platform
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import httpx
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "ops")]

import localservers  # noqa: E402
from bench_kafka import part_kafka, print_kafka  # noqa: E402

from contracts.feedback import RecordFeedback  # noqa: E402
from projections.feedback_list import FeedbackList  # noqa: E402
from projections.runner import rebuild  # noqa: E402
from services.auth import new_key  # noqa: E402
from services.bus import CommandBus, Issued  # noqa: E402
from services.feedback.domain import Feedback  # noqa: E402
from services.feedback.handlers import CREATES, HANDLERS, request_digest  # noqa: E402
from services.follower import ensure_tables  # noqa: E402
from services.store import EVENTS_TABLE, EventStore, open_store  # noqa: E402

console = Console(width=None if sys.stdout.isatty() else 120)
TENANT = "bench"


def body(n: int) -> dict[str, Any]:
    ref, rating = f"run-{n}", 1 + n % 5
    return {"projectId": "bench", "subjectKind": "run", "subjectRef": ref, "kind": "rating"} | {
        "rating": rating
    }


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


def cpu_seconds(pid: int | None, children: bool = False) -> float | None:
    """User + system CPU seconds of a process (and of its live children) from /proc."""
    if pid is None:
        return None
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat") if children else [Path(f"/proc/{pid}/stat")]:
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if stat.parent.name == str(pid) or int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


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


# ---------------------------------------------------------------- 1. HTTP vs library


def start_api(url: str, keys: str, out: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = localservers.free_port()
    env = os.environ | {"DATABASE_URL": url, "FEEDBACKLOOP_API_KEYS": keys}
    env |= {"FEEDBACKLOOP_HOST": "127.0.0.1", "FEEDBACKLOOP_PORT": str(port)}
    env["FEEDBACKLOOP_METRICS_PORT"] = "0"  # not measured here; and 9464 may be taken
    env["FEEDBACKLOOP_LOG_LEVEL"] = "WARNING"  # no access-log line per request
    # The code of this checkout, also when the venv's editable install points at another one.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    with (out / "api.log").open("wb") as log:
        command = [str(Path(sys.executable).parent / "feedbackloop"), "api"]
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    base, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return process, base
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


async def post_all(clients: list[httpx.AsyncClient], first: int, total: int) -> dict[str, Any]:
    """Each client (one keep-alive connection) POSTs in turn until `total` have been sent."""
    numbers, latencies, errors = itertools.count(first), [], []

    async def worker(client: httpx.AsyncClient) -> None:
        while (n := next(numbers)) < first + total:
            t0 = time.perf_counter()
            try:
                response = await client.post("/factory/feedback", json=body(n))
                if not response.is_success:
                    errors.append(f"{response.status_code} {response.text[:200]}")
            except httpx.HTTPError as exc:
                errors.append(repr(exc))
            latencies.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker(client) for client in clients))
    return {"seconds": time.perf_counter() - t0, "latencies": latencies, "errors": errors}


async def load(url: str, base: str, key: str, args: argparse.Namespace, pid: int) -> dict[str, Any]:
    """Warm up, then the timed run, with CPU time and append transactions counted around it.

    The clients are made before anything is timed: each AsyncClient costs ~20 ms of CPU
    (an SSL context), which would otherwise land in the first requests' latency."""

    async def snapshot() -> dict[str, float | None]:
        transactions = await fetchval(url, TRANSACTIONS)
        return {
            "api_server": cpu_seconds(pid),
            "clients": time.process_time(),
            "postgres": cpu_seconds(args.pg_pid, children=True),
            "machine_all_cpus": machine_busy(),
            "transactions": float(transactions),
        }

    headers = {"Authorization": f"Bearer {key}"}
    clients = [
        httpx.AsyncClient(base_url=base, timeout=60, headers=headers) for _ in range(args.clients)
    ]
    try:
        await post_all(clients, 0, args.warmup)
        before = await snapshot()
        run = await post_all(clients, args.warmup, args.requests)
        used = cpu_used(before, await snapshot())
    finally:
        await asyncio.gather(*(client.aclose() for client in clients))
    if used["postgres"] is not None:  # CPU time that no part of the benchmark spent
        ours = used["api_server"] + used["clients"] + used["postgres"]
        used["other_processes"] = round(used["machine_all_cpus"] - ours, 2)
    return run | {"transactions": int(used.pop("transactions")), "cpu_s": used}


def bench_http(url: str, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    key, entry = new_key(TENANT, "bench", ["factory.feedback.write"])
    process, base = start_api(url, json.dumps([entry]), out)
    try:
        run = asyncio.run(load(url, base, key, args, process.pid))
    finally:
        stop_process(process)
    return {
        "server": "subprocess `feedbackloop api` (uvicorn, 1 worker, log level WARNING)",
        "client": f"{args.clients} httpx.AsyncClient in the bench process: one core at most",
        "clients": args.clients,
        "requests": args.requests,
        "warmup_requests": args.warmup,
        "seconds": round(run["seconds"], 3),
        "requests_per_s": round(args.requests / run["seconds"], 1),
        "latency_ms": latency_ms(run["latencies"]),
        "errors": len(run["errors"]),
        "error_samples": run["errors"][:5],
        "append_transactions": run["transactions"],
        "events_per_transaction": round(args.requests / max(1, run["transactions"]), 1),
        "cpu_s": run["cpu_s"],  # postgres: postmaster + live backends, only when started here
    }


async def drive_bus(store: EventStore, first: int, total: int, clients: int) -> dict[str, Any]:
    bus = CommandBus(store, HANDLERS, creates=CREATES)
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


# ------------------------------------------------------ 2. rebuild vs read-and-decode


def fill(store: EventStore, total: int, batch: int = 500) -> float:
    t0 = time.perf_counter()
    for i in range(0, total, batch):
        store.save(*(aggregate(n) for n in range(i, min(total, i + batch))))
    return round(time.perf_counter() - t0, 2)


async def bench_rebuild(store: EventStore, url: str, total: int) -> dict[str, Any]:
    pool = await asyncpg.create_pool(url, min_size=1, max_size=10)
    try:
        async with pool.acquire() as conn:
            await ensure_tables(conn)  # the readers' positions (a service's start makes them)
        t0 = time.perf_counter()
        schema = await rebuild(store, pool, FeedbackList(), swap=True)
        seconds = time.perf_counter() - t0
        rows = await pool.fetchval(f"SELECT count(*) FROM {schema}.feedback")
    finally:
        await pool.close()
    return {
        "events": total,
        "batch_size": 5000,
        "seconds": round(seconds, 3),
        "events_per_s": round(total / seconds, 1),
        "rows_in_read_model": rows,
        "peak_rss_mb_after": peak_rss_mb(),
    }


def bench_read_decode(store: EventStore, page: int = 5000) -> dict[str, Any]:
    decoded, position = 0, 0
    t0 = time.perf_counter()
    while notifications := store.recorder.select_notifications(
        position, page, inclusive_of_start=False
    ):
        for notification in notifications:
            store.mapper.to_domain_event(notification)
        decoded, position = decoded + len(notifications), notifications[-1].id
    seconds = time.perf_counter() - t0
    return {
        "events": decoded,
        "page": page,
        "seconds": round(seconds, 3),
        "events_per_s": round(decoded / seconds, 1),
        "peak_rss_mb_after": peak_rss_mb(),
    }


# ------------------------------------------------------------------------------ main


def part_http(store: EventStore, url: str, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    console.print(f"[bold]1.[/] {args.requests:,} POSTs by {args.clients} HTTP clients …")
    http = bench_http(url, args, out)
    console.print("   the command bus in-process, the library in batches and one by one …")
    bus = asyncio.run(drive_bus(store, 10**6, args.requests, args.clients))
    batched = save_timed(store, url, args.requests, 100)
    single = save_timed(store, url, args.singles, 1)
    library = {"batched": batched, "single": single}
    return {"http_record_feedback": http, "command_bus_direct": bus, "library_append": library}


def part_log(store: EventStore, url: str, args: argparse.Namespace) -> dict[str, Any]:
    console.print(f"[bold]2.[/] filling {args.events:,} events (not timed), rebuilding …")
    fill_seconds = fill(store, args.events)
    sql(url, f"SELECT sum(length(state)) FROM {EVENTS_TABLE}")  # same warm cache for both
    rebuilt = asyncio.run(bench_rebuild(store, url, args.events)) | {"fill_s": fill_seconds}
    console.print("   reading and decoding the log …")
    return {"rebuild_feedback_list": rebuilt, "read_and_decode_log": bench_read_decode(store)}


def code_version() -> dict[str, Any]:
    def git(*argv: str) -> str | None:
        done = subprocess.run(["git", "-C", str(ROOT), *argv], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else None

    status = git("status", "--porcelain", "--untracked-files=no")
    return {"root": str(ROOT), "commit": git("rev-parse", "HEAD"), "dirty": bool(status)}


def run(server_url: str, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    settings = ("server_version", "fsync", "synchronous_commit", "shared_buffers")
    results: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
        }
        | {f"postgres_{s}": sql(server_url, f"SHOW {s}") for s in settings},
        "code": code_version(),
    }
    parts = {
        "http": lambda store, url: part_http(store, url, args, out),
        "log": lambda store, url: part_log(store, url, args),
        "kafka": lambda store, url: part_kafka(store, url, args),
    }
    for part in args.parts:
        name = f"bench_{part}_{uuid.uuid4().hex[:8]}"
        sql(server_url, f"CREATE DATABASE {name}")
        url = urlunsplit(urlsplit(server_url)._replace(path=f"/{name}"))
        store = open_store(url)
        try:
            results |= parts[part](store, url)
        finally:
            store.close()
            sql(server_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    ratios: dict[str, float] = {}
    if "http" in args.parts:
        http, bus, lib = (
            results[k] for k in ("http_record_feedback", "command_bus_direct", "library_append")
        )
        batch_eps = lib["batched"]["events_per_s"]
        ratios["http_rps / library_batch_eps"] = round(http["requests_per_s"] / batch_eps, 3)
        ratios["bus_direct_cps / library_batch_eps"] = round(bus["commands_per_s"] / batch_eps, 3)
        ratios["library_batch_eps / library_single_eps"] = round(
            batch_eps / lib["single"]["events_per_s"], 2
        )
    if "log" in args.parts:
        ratios["rebuild_eps / read_decode_eps"] = round(
            results["rebuild_feedback_list"]["events_per_s"]
            / results["read_and_decode_log"]["events_per_s"],
            3,
        )
    if "kafka" in args.parts:
        ratios["kafka_inbound_cps / plain_consumer_mps"] = round(
            results["kafka_inbound"]["commands_per_s"]
            / results["kafka_plain_consumer"]["messages_per_s"],
            3,
        )
    results["ratios"] = ratios
    results["peak_rss_mb"] = peak_rss_mb()
    return results


def print_table(r: dict[str, Any]) -> None:
    if "kafka_inbound" in r:
        print_kafka(r)
    if "http_record_feedback" not in r or "rebuild_feedback_list" not in r:
        return
    http, bus, lib = r["http_record_feedback"], r["command_bus_direct"], r["library_append"]
    rebuilt, read, ratio, m = (
        r[k] for k in ("rebuild_feedback_list", "read_and_decode_log", "ratios", "machine")
    )
    version = m["postgres_server_version"].split()[0]
    title = f"Feedback Loop bench: {m['cpus']} CPUs, PostgreSQL {version}"
    table = Table(title=f"{title}, fsync {m['postgres_fsync']}")
    for column in ("measurement", "figure", "baseline", "ratio"):
        table.add_column(column, justify="left" if column == "measurement" else "right")

    def rate(d: dict[str, Any], key: str, unit: str = "ev/s") -> str:
        return f"{d[key]:,.0f} {unit}"

    def latency(d: dict[str, Any]) -> str:
        return " / ".join(str(d["latency_ms"][p]) for p in ("p50", "p95", "p99"))

    batched = rate(lib["batched"], "events_per_s") + " (library, batches of 100)"
    http_row = rate(http, "requests_per_s", "req/s")
    bus_row = rate(bus, "commands_per_s", "cmd/s")
    single = rate(lib["single"], "events_per_s") + " (one event per save)"
    decode = rate(read, "events_per_s") + " (read + decode the log)"
    rows = [
        (
            f"HTTP RecordFeedback, {http['clients']} clients",
            http_row,
            batched,
            ratio["http_rps / library_batch_eps"],
        ),
        ("  latency p50 / p95 / p99 (ms)", latency(http), "", ""),
        (
            "  errors | events per transaction",
            f"{http['errors']} | {http['events_per_transaction']}",
            "",
            "",
        ),
        None,
        (
            f"Command bus in-process, {bus['coroutines']} callers",
            bus_row,
            batched,
            ratio["bus_direct_cps / library_batch_eps"],
        ),
        ("  latency p50 / p95 / p99 (ms)", latency(bus), "", ""),
        ("  events per transaction", bus["events_per_transaction"], "", ""),
        None,
        (
            "Library, batches of 100",
            rate(lib["batched"], "events_per_s"),
            single,
            ratio["library_batch_eps / library_single_eps"],
        ),
        None,
        (
            f"Rebuild feedback list, {rebuilt['events']:,} events",
            rate(rebuilt, "events_per_s"),
            decode,
            ratio["rebuild_eps / read_decode_eps"],
        ),
        ("Peak RSS of the bench process", f"{r['peak_rss_mb']} MB", "", ""),
    ]
    for row in rows:
        table.add_section() if row is None else table.add_row(*map(str, row))
    console.print(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Measure HTTP RecordFeedback (32 clients) against the eventsourcing library "
        "appending in batches of 100, and a feedback-list rebuild against reading and decoding "
        "the notification log; each pair on the same PostgreSQL in the same run. Starts a "
        "durable PostgreSQL (fsync on) unless BENCH_DATABASE_URL is set. Writes "
        "<out>/results.json (and <out>/api.log) and prints a table.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--out", type=Path, default=Path("var/bench"), help="output directory")
    parser.add_argument("--quick", action="store_true", help="1,000 requests, 20,000 events")
    parser.add_argument("--clients", type=int, default=32, help="concurrent HTTP clients")
    parser.add_argument("--requests", type=int, help="timed requests [5,000; quick 1,000]")
    parser.add_argument("--events", type=int, help="events to rebuild [100,000; quick 20,000]")
    parser.add_argument("--commands", type=int, help="Kafka commands [5,000; quick 2,000]")
    parser.add_argument(
        "--parts", nargs="+", choices=("http", "log", "kafka"), default=["http", "log", "kafka"]
    )
    args = parser.parse_args(argv)
    args.commands = args.commands or (2_000 if args.quick else 5_000)
    args.requests = args.requests or (1_000 if args.quick else 5_000)
    args.events = args.events or (20_000 if args.quick else 100_000)
    args.warmup = max(4 * args.clients, args.requests // 20)
    args.singles = 200 if args.quick else 500
    args.pg_pid = None  # known when PostgreSQL is started here: then its CPU time is reported
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
        if "kafka" in args.parts and not args.kafka:
            workdir = workdir or Path(tempfile.mkdtemp(prefix="fl-bench-pg-"))
            kafka = localservers.start_kafka(workdir / "kafka")
            args.kafka = kafka.bootstrap
        results = run(server_url, args, out)
    finally:
        if kafka is not None:
            kafka.stop()
        if server is not None:
            server.stop()
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
    results["config"] = {
        k: getattr(args, k)
        for k in (
            "quick",
            "parts",
            "clients",
            "requests",
            "warmup",
            "singles",
            "events",
            "commands",
        )
    } | {
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
