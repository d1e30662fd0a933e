"""The RecordFeedback CloudEvents of part ``kafka`` (``ops/bench_kafka.py``): built before
the clock starts, each placed on the partition its key gives, sent to the command topic in
record batches, and counted once applied (a feedback and a receipt each in the store)."""

import asyncio
import itertools
import json

import asyncpg
from aiokafka import AIOKafkaProducer
from aiokafka.partitioner import DefaultPartitioner
from bench_feedback import TENANT, body
from eventsourcing.utils import get_topic

from services.bus.command_bus import Receipt
from services.feedback.domain import Feedback
from services.store.event_store import EVENTS_TABLE


def command_event(n: int, run: str) -> bytes:
    return json.dumps(
        {
            "specversion": "1.0",
            "id": f"{run}-{n}",
            "source": "urn:bench",
            "type": "evaluation.feedback.v1.RecordFeedback",
            "tenantid": TENANT,
            "actor": "bench",
            "datacontenttype": "application/json",
            "data": body(n),
        }
    ).encode()


Messages = dict[int, list[tuple[bytes, bytes]]]  # a partition's (value, key) pairs, in order


def commands(total: int, run: str, partitions: int) -> Messages:
    """``total`` commands, built before the first is sent (the processes' figure times the
    sending: it must not wait on building them), each keyed by its subject as a sender keeps
    one subject's feedback in order, and placed on the partition Kafka's default partitioner
    gives its key (murmur2, in Python: placed beforehand, not while the clock runs).
    Thousands of keys spread evenly over the partitions (a few dozen can crowd onto some of
    them)."""
    placed: Messages = {partition: [] for partition in range(partitions)}
    every, partition_of = list(range(partitions)), DefaultPartitioner()
    for n in range(total):
        key = body(n)["subjectRef"].encode()
        placed[partition_of(key, every, every)].append((command_event(n, run), key))
    return placed


async def send(producer: AIOKafkaProducer, topic: str, placed: Messages) -> None:
    """The messages sent in record batches, the partitions taking turns (as a stream of
    commands fills them together), and every batch acknowledged. A record batch is filled by
    aiokafka's compiled builder, so the bench's producer spends little of the CPU the timed
    processes share (sending one by one would not)."""
    queues = {p: iter(messages) for p, messages in placed.items() if messages}
    acknowledged = []
    while queues:
        for partition, queue in list(queues.items()):
            batch = producer.create_batch()
            for value, key in queue:
                if batch.append(key=key, value=value, timestamp=None) is None:
                    # Full: sent, and this message opens the partition's next turn.
                    queues[partition] = itertools.chain([(value, key)], queue)
                    break
            else:
                del queues[partition]
            if batch.record_count():
                acknowledged.append(await producer.send_batch(batch, topic, partition=partition))
    await asyncio.gather(*acknowledged)


def producer_for(bootstrap: str) -> AIOKafkaProducer:
    """The bench's sender: record batches of 64 KiB (about 250 commands), all acknowledged."""
    return AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", max_batch_size=64 * 1024)


async def fill_topic(bootstrap: str, topic: str, total: int, run: str, partitions: int) -> None:
    """``total`` commands on the topic, before anything reads them."""
    placed = commands(total, run, partitions)
    producer = producer_for(bootstrap)
    await producer.start()
    try:
        await send(producer, topic, placed)
    finally:
        await producer.stop()


async def stored_commands(pool: asyncpg.Pool) -> tuple[int, int]:
    """How many feedback events and receipts the store holds."""
    count = f"SELECT count(*) FROM {EVENTS_TABLE} WHERE topic = $1"
    feedback = await pool.fetchval(count, get_topic(Feedback.Recorded))
    receipts = await pool.fetchval(count, get_topic(Receipt.Recorded))
    return feedback, receipts
