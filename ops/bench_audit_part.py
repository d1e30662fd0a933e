"""Part ``audit`` of ``ops/bench.py``: what the audit trail costs, the command bus with and
without it (``ops/bench_audit.py``), then HTTP with and without it
(``ops/bench_unaudited_api.py``)."""

import argparse
import sys
from pathlib import Path
from statistics import median
from typing import Any

from bench_audit import audit_runs
from bench_figures import Bench, Target, bracketing, console, row
from bench_http import bench_http

ROOT = Path(__file__).resolve().parent.parent


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
