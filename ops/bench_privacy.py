"""What sealing personal fields costs (part ``privacy`` of ``ops/bench.py``, decisions D42,
D290–D292): the pieces the part is made of.

Every figure of the part is measured interleaved with its baseline, plain / sealed / plain /
sealed / plain / sealed / plain, and its ratio is the median of each sealed round against the
mean of the plain rounds either side of it (``interleaved``): on a shared machine whose speed
changes by a third within a minute, a figure and a baseline measured a minute apart say more
about the machine than about the code, and the median of three leaves out one round that met
a burst of other work (or, on the bus, the first sealed round making its people's keys). The
rebuild's figure rebuilds two logs of the same feedback, one written through the sealing
mapper and one through the plain mapper, each in a database of its own (``two_logs``).
"""

import asyncio
import itertools
import sys
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from statistics import median
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "ops")]

from bench_feedback import TENANT, body, callers, feedback_bus  # noqa: E402
from bench_figures import Bench, Target, console, row  # noqa: E402
from bench_log import bench_read_decode, settle_log  # noqa: E402
from bench_processes import rebuild_process  # noqa: E402
from eventsourcing.persistence import Mapper  # noqa: E402

from contracts.feedback import RecordFeedback  # noqa: E402
from services.bus.issued import Issued  # noqa: E402
from services.feedback.domain import Feedback  # noqa: E402
from services.feedback.handlers import request_digest  # noqa: E402
from services.store.event_store import EventStore  # noqa: E402
from services.store.opening import open_store  # noqa: E402

Measure = Callable[[int], dict[str, Any]]  # a turn (0, 1, …) → its figures


def interleaved(plain: Measure, sealed: Measure, rounds: int = 3) -> dict[str, Any]:
    """``plain`` and ``sealed`` in turns, plain first and last (``rounds`` sealed runs between
    ``rounds + 1`` plain ones). ``ratio``: the median over the sealed runs of each against the
    mean of its two plain neighbours; ``value`` and ``baseline``: the medians of each side."""
    plains, seals = [plain(0)], []
    for n in range(rounds):
        seals.append(sealed(n))
        plains.append(plain(n + 1))
    speed = [run["events_per_s"] for run in plains]
    ratios = [run["events_per_s"] / ((speed[n] + speed[n + 1]) / 2) for n, run in enumerate(seals)]
    return {
        "value": round(median(run["events_per_s"] for run in seals), 1),
        "baseline": round(median(speed), 1),
        "ratio": round(median(ratios), 3),
        "ratios": [round(r, 3) for r in ratios],
        "plain": plains,
        "sealed": seals,
    }


async def drive_people(
    store: EventStore, url: str, first: int, total: int, clients: int, people: int
) -> dict[str, Any]:
    """RecordFeedback through the bus in-process, given by ``people`` people in turn (each
    one's data key made once, then cached: decisions D42, D220)."""
    bus, loop_store = await feedback_bus(store, url)
    numbers = itertools.count(first)

    async def worker() -> None:
        while (n := next(numbers)) < first + total:
            command = RecordFeedback.model_validate(body(n))
            actor = f"person-{n % people}"
            await bus.execute(Issued(command, TENANT, actor, str(uuid.uuid4()), datetime.now(UTC)))

    seconds = await callers(bus, loop_store, worker, clients)
    return {
        "events": total,
        "seconds": round(seconds, 3),
        "events_per_s": round(total / seconds, 1),
    }


def given(n: int, people: int) -> Feedback:
    """The n-th feedback of a rebuild's log, given by one of ``people`` people."""
    command = RecordFeedback.model_validate(body(n))
    return Feedback.record(
        command,
        feedback_id=uuid.uuid4(),
        tenant_id=TENANT,
        given_by=f"person-{n % people}",
        given_at=datetime.now(UTC),
        command_id=str(uuid.uuid4()),
        request_digest=request_digest(command),
    )


def database(url: str, name: str) -> str:
    """A fresh database beside ``url``'s, by name; its URL."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def dropped(url: str, name: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def two_logs(url: str, events: int, people: int) -> dict[str, str]:
    """Two databases beside ``url``'s holding the same ``events`` feedback (one event each),
    written through the plain mapper and through the sealing one (``givenBy`` sealed): their
    URLs by side, ``plain`` and ``sealed``."""
    suffix = uuid.uuid4().hex[:8]
    urls = {}
    for side in ("plain", "sealed"):
        urls[side] = database(url, f"bench_privacy_{side}_{suffix}")
        store = open_store(urls[side])
        if side == "plain":
            store.mapper = Mapper(store.mapper.transcoder)
        try:
            for first in range(0, events, 500):
                store.save(*(given(n, people) for n in range(first, min(events, first + 500))))
        finally:
            store.close()
    return urls


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
