"""Part ``kafka`` of ``ops/bench.py``: the Kafka ingest of Feedback Loop, each figure beside a
baseline measured in the same run on the same broker and PostgreSQL, so the ratio is what a
reader compares, and the rows made of them.

RecordFeedback CloudEvents already on a topic of ``--partitions`` partitions (the service's
default, ``ops/bench_command_topic.py``), applied exactly once by the real inbound consumer
(``services.kafka.inbound.InboundConsumer``: parse, bounds, receipts, one transaction per
partition's poll), commands/s from its start to the last one settled; checked afterwards: one
feedback and one receipt per command. And as production runs it (docs/operations.md: Beyond one
machine, ``ops/bench_inbound_processes.py``): N ``feedbackloop inbound`` processes of one group
(N = the cores by default), settled in the group before the clock starts, timed from the first
command sent to the last one's feedback and receipt in the store. Both with their CPU per
command. Baseline: one plain aiokafka consumer of a fresh group reading the same topic and
decoding each JSON value, nothing stored (one process, not N: the ratio of the N-process figure
compares N processes with one).

``ops/bench.py`` runs it as its part ``kafka`` (in a fresh database) and ``part_kafka`` turns
what it measured into its rows. Timings are recorded, never asserted.

    python ops/bench.py --parts kafka [--commands 60000]
"""

import asyncio
import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import asyncpg
from aiokafka import AIOKafkaConsumer

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "ops")]

from bench_command_topic import fill_topic, stored_commands  # noqa: E402
from bench_feedback import feedback_bus  # noqa: E402
from bench_figures import Bench, Target, console, row  # noqa: E402
from bench_inbound_processes import inbound_processes  # noqa: E402

from contracts import topics  # noqa: E402
from services.feedback.subscriptions import SUBSCRIPTIONS  # noqa: E402
from services.kafka.admin import ensure_topics  # noqa: E402
from services.kafka.inbound import InboundConsumer, ensure_inbound_tables  # noqa: E402
from services.store.event_store import EventStore  # noqa: E402


async def plain_consumer(bootstrap: str, topic: str, total: int) -> dict[str, Any]:
    """The baseline: read and decode every message, store nothing."""
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=f"bench-plain-{uuid.uuid4().hex[:8]}",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    t0 = time.perf_counter()
    await consumer.start()
    seen = 0
    try:
        while seen < total:
            polled = await consumer.getmany(timeout_ms=500, max_records=500)
            for records in polled.values():
                for record in records:
                    json.loads(record.value)
                    seen += 1
            await consumer.commit()
    finally:
        await consumer.stop()
    seconds = time.perf_counter() - t0
    return {"messages": seen, "seconds": round(seconds, 3), "messages_per_s": seen / seconds}


async def inbound_consumer(
    store: EventStore, url: str, bootstrap: str, prefix: str, total: int
) -> dict[str, Any]:
    """The figure: the real consumer, from its start to the last command settled."""
    pool = await asyncpg.create_pool(url, min_size=1, max_size=10)
    bus, loop_store = await feedback_bus(store, url)
    try:
        async with pool.acquire() as conn:
            await ensure_inbound_tables(conn)
        consumer = InboundConsumer(
            bus,
            store,
            pool,
            SUBSCRIPTIONS,
            bootstrap=bootstrap,
            group_id=f"bench-inbound-{uuid.uuid4().hex[:8]}",
            topic_prefix=prefix,
        )
        t0, cpu0 = time.perf_counter(), time.process_time()
        await consumer.start()
        try:
            while consumer.settled < total:
                await asyncio.sleep(0.05)
            seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        finally:
            await consumer.stop()
        feedback, receipts = await stored_commands(pool)
    finally:
        await bus.aclose()
        await loop_store.close()
        await pool.close()
    return {
        "commands": total,
        "seconds": round(seconds, 3),
        "commands_per_s": total / seconds,
        "applied": consumer.applied,
        "repeated": consumer.repeated,
        "dead_lettered": consumer.dead_lettered,
        "parked": consumer.parked,
        "exactly_once": feedback == total == receipts == consumer.applied,
        "transactions": bus.transactions,
        "commands_per_transaction": round(total / max(1, bus.transactions), 1),
        # This process's CPU (every thread: the consumer's loop and the bus's) a command.
        "cpu_us_per_command": round(cpu * 1e6 / total, 1),
    }


async def bench_kafka(
    store: EventStore,
    url: str,
    bootstrap: str,
    total: int,
    processes: int,
    partitions: int,
    logs: Path,
) -> dict[str, Any]:
    run = uuid.uuid4().hex[:8]
    prefix = f"bench{run}."
    topic = prefix + topics.RECORD_FEEDBACK
    names = (topic, topics.dead_letter(topic))
    await ensure_topics(bootstrap, names, partitions=partitions, replication_factor=1)
    await fill_topic(bootstrap, topic, total, run, partitions)
    baseline = await plain_consumer(bootstrap, topic, total)
    figure = await inbound_consumer(store, url, bootstrap, prefix, total)
    spread = await inbound_processes(url, bootstrap, total, processes, partitions, logs)
    return {
        "kafka_inbound": figure,
        "kafka_inbound_processes": spread,
        "kafka_plain_consumer": baseline,
    }


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
