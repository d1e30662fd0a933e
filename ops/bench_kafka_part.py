"""Part ``kafka`` of ``ops/bench.py``: the figures of the command topic applied exactly once,
measured by ``ops/bench_kafka.py``."""

import asyncio
from typing import Any

from bench_figures import Bench, Target, console, row
from bench_kafka import bench_kafka


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
