"""What the audit trail costs (issue 43, item 2; decisions D223, D281): RecordFeedback through
the command bus in-process, one command a call from many callers (what an HTTP command runs)
and batches of 100 from one caller at one time (what the batch route runs), with the audit as
every process of the service builds it (``AuditTrail``) and without, in the same run,
alternating (without, with, without), so that each figure sees the machine as its baseline
does."""

import argparse
import asyncio
import itertools
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from statistics import median
from typing import Any

import asyncpg
from bench_feedback import TENANT, body, feedback_bus
from bench_figures import Bench, Target, bracketing, console, row
from bench_http import bench_http

from contracts.feedback import RecordFeedback
from services.bus.audit import AuditTrail, ensure_table
from services.bus.issued import Issued
from services.store.event_store import EventStore


def issued(n: int, actor: str | None = None, at: datetime | None = None) -> Issued:
    command = RecordFeedback.model_validate(body(n))
    actor = actor or f"person-{n % 1000}"
    return Issued(command, TENANT, actor, str(uuid.uuid4()), at or datetime.now(UTC))


async def drive(
    store: EventStore, url: str, first: int, total: int, clients: int, batch: int, audited: bool
) -> dict[str, Any]:
    """``total`` commands by ``clients`` callers, ``batch`` a call (1: ``execute``)."""
    pool = await asyncpg.create_pool(url, min_size=1, max_size=2)
    async with pool.acquire() as conn:
        await ensure_table(conn)
    bus, loop_store = await feedback_bus(store, url)
    bus.audit = AuditTrail(pool) if audited else None
    starts = itertools.count(first, batch)

    async def caller() -> None:
        while (n := next(starts)) < first + total:
            if batch == 1:
                await bus.execute(issued(n))
            else:  # as the batch route issues them: one caller, one time (decisions D281)
                caller, at = f"person-{n % 1000}", datetime.now(UTC)
                commands = [issued(m, caller, at) for m in range(n, n + batch)]
                await bus.execute_batch(commands, None)

    t0 = time.perf_counter()
    try:
        await asyncio.gather(*(caller() for _ in range(clients)))
        await bus.flush_audit()  # the rows written count in the figure
        seconds = time.perf_counter() - t0
    finally:
        await bus.aclose()
        await loop_store.close()
        rows = await pool.fetchval("SELECT count(*) FROM audit_trail")
        await pool.close()
    return {
        "events": total,
        "seconds": round(seconds, 3),
        "events_per_s": round(total / seconds, 1),
        "audit_rows_total": rows,
    }


def audit_runs(
    store: EventStore, url: str, total: int, clients: int, batch: int
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Without the audit (half), with it (whole), without again (half)."""
    base = 10**8 * (2 if batch > 1 else 1)
    # Not timed: the 1,000 people's data keys made, the tables and caches warm, so that the
    # first figure does not pay for what the others then find done.
    asyncio.run(drive(store, url, base - 10**7, 2000, clients, 1, False))
    before = asyncio.run(drive(store, url, base, total // 2, clients, batch, False))
    audited = asyncio.run(drive(store, url, base + total, total, clients, batch, True))
    after = asyncio.run(drive(store, url, base + 3 * total, total // 2, clients, batch, False))
    return before, audited, after


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
