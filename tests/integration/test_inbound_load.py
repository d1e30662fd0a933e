"""1,000 valid commands interleaved with 1,000 malformed
messages on a real broker; every valid one applied once, every malformed one dead-lettered or
parked with a reason, no partition stalled."""

import asyncio
import json
import random
import tracemalloc
from collections.abc import Callable

from aiokafka import AIOKafkaProducer

from contracts import topics
from services.processes.bootstrap import Runtime
from tests.kafka_peer import (
    consume,
    feedback_recorded,
    inbound,
    record_feedback_event,
    settled,
)

DATA = {"projectId": "p", "subjectKind": "run", "subjectRef": "r", "kind": "escalation"}


def valid(i: int) -> bytes:
    return record_feedback_event("tenant-l", "svc-a", {**DATA, "subjectRef": f"r-{i}"})


def with_attributes(**attributes: object) -> bytes:
    message = json.loads(valid(-1))
    message.update(attributes)
    return json.dumps({k: v for k, v in message.items() if v is not None}).encode()


# Each malformed kind, and how it is told apart on the dead-letter topic (dlt-field).
MALFORMED: list[tuple[str, Callable[[int], bytes]]] = [
    ("value", lambda i: b"{not json " + str(i).encode()),
    ("rating", lambda i: with_attributes(data={**DATA, "kind": "rating", "rating": "5"})),
    ("type", lambda i: with_attributes(type="evaluation.feedback.v1.Unknown")),
    ("tenantid", lambda i: with_attributes(tenantid=None)),
    ("actor", lambda i: with_attributes(actor="a" * 5000)),
]
BIG_TENANT = 5  # values of 600 KB: refused by size, still small enough for the DLT
HUGE = 5  # gzip-compressed 2 MB values: refused by size, too big for the DLT, so parked


def malformed(n: int) -> list[bytes]:
    messages = [MALFORMED[i % len(MALFORMED)][1](i) for i in range(n - BIG_TENANT - HUGE)]
    messages += [with_attributes(tenantid="t" * 600_000) for _ in range(BIG_TENANT)]
    messages += [with_attributes(data={**DATA, "subjectRef": "r" * 2_000_000}) for _ in range(HUGE)]
    return messages


async def produce_interleaved(bootstrap: str, topic: str, messages: list[bytes]) -> None:
    # gzip: the broker takes the 2 MB values compressed (its limit is on the compressed batch).
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        acks="all",
        compression_type="gzip",
        max_request_size=4 * 1024 * 1024,
        linger_ms=20,
    )
    await producer.start()
    try:
        sent = [
            await producer.send(topic, value=value, key=f"k{i % 12}".encode())
            for i, value in enumerate(messages)
        ]
        await asyncio.gather(*sent)
    finally:
        await producer.stop()


async def test_a_thousand_valid_commands_among_a_thousand_malformed_are_each_applied_once(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    await kafka_runtime.ensure_topics()
    command_topic = kafka_runtime.settings.topic_prefix + topics.RECORD_FEEDBACK
    good, bad = [valid(i) for i in range(1000)], malformed(1000)
    messages = good + bad
    random.Random(7).shuffle(messages)
    await produce_interleaved(kafka_bootstrap, command_topic, messages)

    tracemalloc.start()
    try:
        async with inbound(kafka_runtime) as consumer:
            await settled(consumer, 2000, timeout=90)
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    # Bounded memory: what a poll may fetch is capped (1 MiB a partition, 8 MiB a request),
    # and a message is refused by size before it is decoded; 2 MB values pass through, one
    # partition's poll at a time. The whole topic holds more than 10 MB decompressed.
    print(f"peak Python memory while consuming: {peak / 2**20:.1f} MiB")
    assert peak < 48 * 2**20

    assert (consumer.applied, await feedback_recorded(kafka_runtime)) == (1000, 1000)
    assert (consumer.dead_lettered, consumer.parked) == (1000 - HUGE, HUGE)
    assert (
        await kafka_runtime.pool.fetchval("SELECT count(*) FROM parked WHERE reader = 'inbound'")
        == HUGE
    )
    parked = await kafka_runtime.pool.fetch("SELECT * FROM parked WHERE reader = 'inbound'")
    assert {row["payload_size"] > 2_000_000 for row in parked} == {True}
    assert all("not dead-lettered" in row["error"] and row["field"] == "value" for row in parked)
    assert all(len(row["head"]) == 1024 and len(row["sha256"]) == 64 for row in parked)

    dead = await consume(kafka_bootstrap, topics.dead_letter(command_topic), 1000 - HUGE)
    assert len(dead) == 1000 - HUGE
    fields = [dict(m.headers)["dlt-field"].decode() for m in dead]
    expected = {f for f, _ in MALFORMED} | {"value"}
    assert set(fields) == expected
    assert all(dict(m.headers)["dlt-reason"] for m in dead)
    # Fewer transactions than commands: a partition's poll is committed together.
    assert kafka_runtime.bus.transactions < 200
