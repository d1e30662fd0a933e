"""Part ``relay`` of ``ops/bench.py``: the relay to Kafka of Feedback Loop against a plain
aiokafka producer, each figure beside a baseline measured in the same run on the same broker and
PostgreSQL, so the ratio is what a reader compares, and the rows made of them.

FeedbackRecorded events already in the store (not timed; the table analysed after, as
autovacuum would have, decisions D321), published by the real relay on the real follower (read
the log, decode, map to CloudEvents, idempotent producer with ``acks=all``, position moved after
every acknowledgement), events/s from its start until its position reaches the head, and this
process's CPU per event over that time (the relay runs in it, its follower reading the log in a
thread); checked afterwards: the topic holds one message per event. Baseline: a plain aiokafka
producer (idempotent, ``acks=all``) sending the very same messages, built beforehand, and
waiting for every acknowledgement. And in two shares (``feedbackloop relay --share 1/2`` and
``2/2``, two processes, decisions D270–D275): both started and following first, then both
rewound to the start of the same events (as a crash rewinds a position) and woken, events/s
until both positions reach the head, with the two processes' CPU per event; each reads the
whole log and decodes only its share.

``ops/bench.py`` runs it as its part ``relay`` (in a fresh database) and ``part_relay`` turns
what it measured into its rows. Timings are recorded, never asserted.

    python ops/bench.py --parts relay [--relay-events 50000]
"""

import asyncio
import signal
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.structs import TopicPartition
from bench_feedback import TENANT, body
from bench_figures import Bench, Target, console, row
from bench_processes import cpu_seconds, feedbackloop, reap, service_env

from contracts.feedback import RecordFeedback
from services.feedback.domain import Feedback
from services.feedback.handlers import request_digest
from services.feedback.published import PUBLICATIONS
from services.followers.follower import Follower
from services.followers.positions import read_position
from services.followers.tables import ensure_tables
from services.kafka.admin import ensure_topics
from services.kafka.publication import to_message
from services.kafka.relay import LINGER_MS, MAX_BATCH_BYTES, Relay
from services.store.event_store import EVENTS_TABLE, EventStore

SOURCE = "urn:feedbackloop:bench"


def fill_store(store: EventStore, total: int, batch: int = 500) -> None:
    """``total`` FeedbackRecorded events in the store, appended in batches (not timed)."""
    at = datetime.now(UTC)
    for first in range(0, total, batch):
        aggregates = []
        for n in range(first, min(total, first + batch)):
            command = RecordFeedback.model_validate(body(n))
            aggregates.append(
                Feedback.record(
                    command,
                    feedback_id=uuid.uuid4(),
                    tenant_id=TENANT,
                    given_by="bench",
                    given_at=at,
                    command_id=f"bench/{n}",
                    request_digest=request_digest(command),
                )
            )
        store.save(*aggregates)


def messages(store: EventStore, prefix: str) -> list[tuple[str, bytes, bytes, list[Any]]]:
    """The messages the relay publishes for the stored events, built as it builds them."""
    [publication] = PUBLICATIONS
    built = []
    for notification in store.recorder.select_notifications(start=1, limit=10**9):
        event = store.mapper.to_domain_event(notification)
        message = to_message(publication, event, SOURCE)
        key = str(message.key).encode()
        built.append(
            (prefix + publication.topic, message.value, key, list(message.headers.items()))
        )
    return built


async def plain_producer(
    bootstrap: str, built: list[tuple[str, bytes, bytes, list[Any]]]
) -> dict[str, Any]:
    """The baseline: send the prebuilt messages, idempotent and ``acks=all``, and wait for
    every acknowledgement."""
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        enable_idempotence=True,
        acks="all",
        linger_ms=LINGER_MS,
        max_batch_size=MAX_BATCH_BYTES,
    )
    await producer.start()
    try:
        t0 = time.perf_counter()
        sent = [
            await producer.send(topic, value=value, key=key, headers=headers)
            for topic, value, key, headers in built
        ]
        await asyncio.gather(*sent)
        seconds = time.perf_counter() - t0
    finally:
        await producer.stop()
    return {
        "messages": len(built),
        "seconds": round(seconds, 3),
        "messages_per_s": len(built) / seconds,
    }


async def end_offsets(bootstrap: str, topic: str) -> int:
    """How many messages the topic holds (acknowledged ones only are readable)."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
    await consumer.start()
    try:
        partitions = consumer.partitions_for_topic(topic) or set()
        if not partitions:
            await consumer._client.force_metadata_update()
            partitions = consumer.partitions_for_topic(topic) or set()
        ends = await consumer.end_offsets([TopicPartition(topic, p) for p in partitions])
        return sum(ends.values())
    finally:
        await consumer.stop()


async def run_relay(
    store: EventStore, url: str, bootstrap: str, prefix: str, total: int
) -> dict[str, Any]:
    """The figure: the real relay on the real follower, from its start to the head."""
    pool = await asyncpg.create_pool(url, min_size=1, max_size=4)
    try:
        async with pool.acquire() as conn:
            await ensure_tables(conn)
        head = store.recorder.max_notification_id() or 0
        relay = Relay(bootstrap, PUBLICATIONS, source=SOURCE, topic_prefix=prefix)
        follower = Follower(store, pool, relay)
        stop = asyncio.Event()
        t0, cpu0 = time.perf_counter(), time.process_time()
        task = asyncio.create_task(follower.run(stop))
        while await read_position(pool, relay.name) < head:
            if task.done():
                task.result()
            await asyncio.sleep(0.02)
        seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        stop.set()
        await task
    finally:
        await pool.close()
    return {
        "events": total,
        "seconds": round(seconds, 3),
        "events_per_s": total / seconds,
        # This process's CPU (every thread: the follower reads the log in one) per event.
        "cpu_us_per_event": round(cpu / total * 1e6, 1),
        "published": relay.published,
        "parked": follower.status.parked,
    }


SHARES = ("1/2", "2/2")


async def following(pool: asyncpg.Pool, readers: list[str], processes: list[Any]) -> None:
    """Until every reader's heartbeat says it follows (its process started and caught up)."""
    while True:
        states = await pool.fetch(
            "SELECT state FROM heartbeats WHERE reader = ANY($1::text[])", readers
        )
        if len(states) == len(readers) and all(r["state"] == "following" for r in states):
            return
        if any(p.poll() is not None for p in processes):
            raise RuntimeError("a relay share exited; see its log")
        await asyncio.sleep(0.1)


async def run_relay_shares(url: str, bootstrap: str, prefix: str, logs: Path) -> dict[str, Any]:
    """The two-share figure: two ``feedbackloop relay`` processes, one per share, from the
    moment both are rewound to the events' start until both stand at the head."""
    names = ["relay-1of2", "relay-2of2"]
    pool = await asyncpg.create_pool(url, min_size=1, max_size=2)
    env = service_env(url, KAFKA_BOOTSTRAP_SERVERS=bootstrap, FEEDBACKLOOP_TOPIC_PREFIX=prefix)
    env["FEEDBACKLOOP_CLOUDEVENTS_SOURCE"] = SOURCE
    processes = []
    try:
        head = await pool.fetchval(f"SELECT max(notification_id) FROM {EVENTS_TABLE}") or 0
        total = await pool.fetchval(f"SELECT count(*) FROM {EVENTS_TABLE}")
        # Nothing to publish at first: the processes start, open and follow, not timed.
        await pool.executemany(
            "INSERT INTO reader_positions (reader, position) VALUES ($1, $2) "
            "ON CONFLICT (reader) DO UPDATE SET position = $2",
            [(name, head) for name in names],
        )
        for share in SHARES:
            log = logs / f"relay-shares-{share.replace('/', 'of')}.log"
            processes.append(feedbackloop("relay", "--share", share, env=env, log=log))
        await following(pool, names, processes)
        cpu0 = [cpu_seconds(p.pid) or 0.0 for p in processes]
        t0 = time.perf_counter()
        await pool.execute(
            "UPDATE reader_positions SET position = 0 WHERE reader = ANY($1::text[])", names
        )
        await pool.execute(f"SELECT pg_notify('{EVENTS_TABLE}', 'bench')")
        while min([await read_position(pool, name) for name in names]) < head:
            if any(p.poll() is not None for p in processes):
                raise RuntimeError(f"a relay share exited; see {logs}")
            await asyncio.sleep(0.02)
        seconds = time.perf_counter() - t0
        cpu = sum((cpu_seconds(p.pid) or 0.0) - c for p, c in zip(processes, cpu0, strict=True))
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            reap(process)
        await pool.close()
    return {
        "events": total,
        "seconds": round(seconds, 3),
        "events_per_s": total / seconds,
        "cpu_us_per_event": round(cpu / total * 1e6, 1),  # both processes', every thread
    }


async def analyzed(url: str) -> None:
    """The log's statistics taken now, as autovacuum takes them within a minute of a burst of
    appends (decisions D321). Without them PostgreSQL reads every row after a page's start and
    sorts them for each page: the relay's figure depended on whether autovacuum had come by
    since ``fill_store``."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(f"ANALYZE {EVENTS_TABLE}")
    finally:
        await conn.close()


async def bench_relay(
    store: EventStore, url: str, bootstrap: str, total: int, logs: Path | None = None
) -> dict[str, Any]:
    run = uuid.uuid4().hex[:8]
    [publication] = PUBLICATIONS
    await asyncio.to_thread(fill_store, store, total)
    await analyzed(url)
    built = await asyncio.to_thread(messages, store, f"benchbase{run}.")
    figure_topic, base_topic = f"bench{run}." + publication.topic, built[0][0]
    await ensure_topics(bootstrap, (figure_topic, base_topic), partitions=3, replication_factor=1)
    baseline = await plain_producer(bootstrap, built)
    figure = await run_relay(store, url, bootstrap, f"bench{run}.", total)
    figure["on_topic"] = await end_offsets(bootstrap, figure_topic)
    baseline["on_topic"] = await end_offsets(bootstrap, base_topic)
    results = {"relay": figure, "relay_plain_producer": baseline}
    if logs is not None:
        shares = await run_relay_shares(url, bootstrap, f"benchshares{run}.", logs)
        shares["on_topic"] = await end_offsets(bootstrap, f"benchshares{run}." + publication.topic)
        results["relay_two_shares"] = shares
    return results


def part_relay(bench: Bench) -> list[dict[str, Any]]:
    """5. The relay to Kafka (``ops/bench_relay.py``)."""
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
