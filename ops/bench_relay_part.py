"""Part ``relay`` of ``ops/bench.py``: the figures of the relay to Kafka against a plain
aiokafka producer, measured by ``ops/bench_kafka.py``."""

import asyncio
from typing import Any

from bench_figures import Bench, Target, console, row
from bench_kafka import bench_relay


def part_relay(bench: Bench) -> list[dict[str, Any]]:
    """5. The relay to Kafka (``ops/bench_kafka.py``)."""
    args = bench.args
    console.print(f"[bold]5.[/] relaying {args.relay_events:,} FeedbackRecorded events …")
    results = asyncio.run(
        bench_relay(bench.store, bench.url, args.kafka, args.relay_events, bench.out)
    )
    bench.details |= results
    relay, plain = results["relay"], results["relay_plain_producer"]
    shares = results["relay_two_shares"]
    value = round(relay["events_per_s"], 1)
    complete = relay["on_topic"] == relay["events"] == relay["published"]
    shared = shares["on_topic"] == shares["events"]
    return [
        row(
            f"Relay to Kafka, {args.relay_events:,} events published and acknowledged",
            value,
            "events/s",
            "plain aiokafka producer, same messages, idempotent, acks=all",
            round(plain["messages_per_s"], 1),
            Target(0.8, of="ratio"),
        ),
        row("  same, absolute", value, "events/s", target=Target(10_000)),
        row("  the relay's CPU per event", relay["cpu_us_per_event"], "µs"),
        row("  every event on the topic once", int(complete), "bool", target=Target(1)),
        row(
            "Relay, two shares in two processes (--share 1/2, 2/2), same events",
            round(shares["events_per_s"], 1),
            "events/s",
            "plain aiokafka producer, same messages, idempotent, acks=all",
            round(plain["messages_per_s"], 1),
            Target(0.8, of="ratio"),
        ),
        row("  the two shares' CPU per event", shares["cpu_us_per_event"], "µs"),
        row("  every event on the shares' topic once", int(shared), "bool", target=Target(1)),
    ]
