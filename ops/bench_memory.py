"""Memory (part ``memory`` of ``ops/bench.py``): the peak RSS of the rebuild, of its largest
worker process and of ``feedbackloop relay``, with ``--history`` and then twice as many events
stored (``ops/bench_processes.py``)."""

import asyncio
from typing import Any

from bench_figures import Bench, Target, console, row
from bench_library import fill
from bench_log import settle_log
from bench_processes import rebuild_process, relay_process


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
