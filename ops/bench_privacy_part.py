"""Part ``privacy`` of ``ops/bench.py``: what sealing personal fields costs, each figure in
turns with the same work through the plain mapper (``ops/bench_privacy.py``)."""

import asyncio
import itertools
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from bench_figures import Bench, Target, console, row
from bench_log import bench_read_decode, settle_log
from bench_privacy import drive_people, dropped, interleaved, two_logs
from bench_processes import rebuild_process
from eventsourcing.persistence import Mapper


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
