"""Rebuild (part ``log`` of ``ops/bench.py``): ``feedbackloop rebuild`` of every read model
from a filled log, against reading and decoding the log, the part of any rebuild that no read
model can avoid, before the rebuild and after."""

import time
from typing import Any

from bench_figures import Bench, Target, bracketing, console, row
from bench_library import fill
from bench_measures import peak_rss_mb
from bench_processes import rebuild_process
from bench_sql import sql

from services.followers.decoding import decode
from services.store.event_store import EVENTS_TABLE, EventStore
from services.store.log_reading import read_log


def settle_log(url: str) -> None:
    """The freshly filled log as a long-lived one is, for the figure and its baseline alike:
    vacuumed (hint bits set, statistics known) and in the cache. Unsettled, the first reader
    of a million new rows set their hint bits and met autovacuum at its work: the same rebuild
    took 92 s in one run and 137 s in the next, its own CPU the same."""
    sql(url, f"VACUUM ANALYZE {EVENTS_TABLE}")
    sql(url, f"SELECT sum(length(state)) FROM {EVENTS_TABLE}")


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
