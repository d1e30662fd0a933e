"""Kafka benchmarks of Feedback Loop, each figure beside a baseline
measured in the same run on the same broker and PostgreSQL, so the ratio is what a reader
compares.

- Ingest (part ``kafka``): RecordFeedback CloudEvents already on a topic of ``--partitions``
  partitions (the service's default), applied exactly once by the real inbound consumer
  (``services.kafka.inbound.InboundConsumer``: parse, bounds, receipts, one transaction per
  partition's poll), commands/s from its start to the last one settled; checked afterwards: one
  feedback and one receipt per command. And as production runs it (docs/operations.md: Beyond one
  machine): N ``feedbackloop inbound`` processes of one group (N = the cores by default), settled
  in the group before the clock starts, timed from the first command sent to the last one's
  feedback and receipt in the store. Both with their CPU per command. Baseline: one plain aiokafka
  consumer of a fresh group reading the same topic and decoding each JSON value, nothing stored
  (one process, not N: the ratio of the N-process figure compares N processes with one).
- Relay (part ``relay``): FeedbackRecorded events already in the store (not timed; the table
  analysed after, as autovacuum would have, decisions D321), published by
  the real relay on the real follower (read the log, decode, map to CloudEvents, idempotent
  producer with ``acks=all``, position moved after every acknowledgement), events/s from its start
  until its position reaches the head, and this process's CPU per event over that time (the relay
  runs in it, its follower reading the log in a thread); checked afterwards: the topic holds one
  message per event. Baseline: a plain aiokafka producer (idempotent, ``acks=all``) sending the
  very same messages, built beforehand, and waiting for every acknowledgement.
  And in two shares (``feedbackloop relay --share 1/2`` and ``2/2``, two processes, decisions
  D270–D275): both started and following first, then both rewound to the start of the same
  events (as a crash rewinds a position) and woken, events/s until both positions reach the
  head, with the two processes' CPU per event; each reads the whole log and decodes only its
  share.

``ops/bench.py`` runs them as its parts ``kafka`` and ``relay`` (each in a fresh database) and
turns what they measured into its rows. Timings are recorded, never asserted.

    python ops/bench.py --parts kafka relay [--commands 60000] [--relay-events 50000]
"""

import asyncio
import itertools
import json
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.partitioner import DefaultPartitioner
from aiokafka.structs import TopicPartition
from eventsourcing.utils import get_topic

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "ops")]

from bench_processes import cpu_seconds, feedbackloop, reap, service_env  # noqa: E402

from contracts import topics  # noqa: E402
from contracts.feedback import RecordFeedback  # noqa: E402
from services.bus.command_bus import CommandBus, Receipt  # noqa: E402
from services.declaration import registry  # noqa: E402
from services.feedback.context import FEEDBACK  # noqa: E402
from services.feedback.domain import Feedback  # noqa: E402
from services.feedback.handlers import request_digest  # noqa: E402
from services.feedback.published import PUBLICATIONS  # noqa: E402
from services.feedback.subscriptions import SUBSCRIPTIONS  # noqa: E402
from services.followers.follower import Follower  # noqa: E402
from services.followers.positions import read_position  # noqa: E402
from services.followers.tables import ensure_tables  # noqa: E402
from services.kafka.admin import ensure_topics  # noqa: E402
from services.kafka.inbound import InboundConsumer, ensure_inbound_tables  # noqa: E402
from services.kafka.publication import to_message  # noqa: E402
from services.kafka.relay import LINGER_MS, MAX_BATCH_BYTES, Relay  # noqa: E402
from services.store.event_store import EVENTS_TABLE, EventStore  # noqa: E402
from services.store.fast_loop_store import LoopStore  # noqa: E402

TENANT = "bench"
SOURCE = "urn:feedbackloop:bench"


def body(n: int) -> dict[str, Any]:
    """The n-th RecordFeedback every part of the benchmarks sends."""
    ref, rating = f"run-{n}", 1 + n % 5
    return {"projectId": "bench", "subjectKind": "run", "subjectRef": ref, "kind": "rating"} | {
        "rating": rating
    }


# ---------------------------------------------------- Kafka ingest vs a plain aiokafka consumer


async def feedback_bus(store: EventStore, url: str) -> tuple[CommandBus, LoopStore]:
    """The feedback context's bus as a process of the service builds it (``Runtime.open``),
    and the loop store it writes with; the caller closes both."""
    loop_store = await LoopStore.open(url, store)
    commands = registry((FEEDBACK,))
    bus = CommandBus(
        store,
        commands.handlers,
        creates=commands.creates,
        loop_store=loop_store,
        alone=commands.alone,
    )
    return bus, loop_store


async def callers(
    bus: CommandBus, loop_store: LoopStore, call: Callable[[], Awaitable[None]], clients: int
) -> float:
    """Seconds for ``clients`` callers running ``call`` at once; the bus and its loop store
    closed after."""
    t0 = time.perf_counter()
    try:
        await asyncio.gather(*(call() for _ in range(clients)))
    finally:
        await bus.aclose()
        await loop_store.close()
    return time.perf_counter() - t0


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


async def group_stable(bootstrap: str, group: str, members: int, timeout: float = 60.0) -> None:
    """Wait until the consumer group has settled with ``members`` members (each holding its
    share of the partitions), so the clock does not time a rebalance."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        async with asyncio.timeout(timeout):
            while True:
                [response] = await admin.describe_consumer_groups([group])
                [(_, _, state, _, _, joined, *_)] = response.groups
                if state == "Stable" and len(joined) == members:
                    return
                await asyncio.sleep(0.2)
    finally:
        await admin.close()


async def stored_commands(pool: asyncpg.Pool) -> tuple[int, int]:
    """How many feedback events and receipts the store holds."""
    count = f"SELECT count(*) FROM {EVENTS_TABLE} WHERE topic = $1"
    feedback = await pool.fetchval(count, get_topic(Feedback.Recorded))
    receipts = await pool.fetchval(count, get_topic(Receipt.Recorded))
    return feedback, receipts


HEAD = f"SELECT coalesce(max(notification_id), 0) FROM {EVENTS_TABLE}"


async def applied_by_now(pool: asyncpg.Pool, head: int, total: int) -> tuple[int, int]:
    """``stored_commands`` once the log's head has passed the two events (a feedback and a
    receipt) of each of ``total`` commands beyond ``head``; until then (0, 0). The counts
    scan the events table (26 ms at 40,000 events): polled every 20 ms, they kept
    PostgreSQL busy on the very cores the timed processes share. The head is one probe of
    the primary key, and a log with fewer new events than that cannot hold them all."""
    if await pool.fetchval(HEAD) < head + 2 * total:
        return 0, 0
    return await stored_commands(pool)


def start_inbound(env: dict[str, str], processes: int, logs: Path) -> list[subprocess.Popen[bytes]]:
    """``processes`` ``feedbackloop inbound`` processes, each logging to a file of ``logs``."""
    logs.mkdir(parents=True, exist_ok=True)
    started = []
    for n in range(processes):
        log = logs / f"inbound-{n}.log"
        log.write_text("")  # this run's only (``feedbackloop`` appends)
        started.append(feedbackloop("inbound", env=env, log=log))
    return started


async def inbound_processes(
    url: str, bootstrap: str, total: int, processes: int, partitions: int, logs: Path
) -> dict[str, Any]:
    """The figure as production runs it: ``processes`` ``feedbackloop inbound`` processes of
    one consumer group (docs/operations.md: Beyond one machine), started and settled in the
    group first; timed from the first command sent to the last one applied (its feedback and
    receipt in the store). Their CPU is read from /proc over the same span."""
    run = uuid.uuid4().hex[:8]
    prefix = f"benchp{run}."
    topic = prefix + topics.RECORD_FEEDBACK
    group = f"bench-inbound-{run}"
    await ensure_topics(
        bootstrap, (topic, topics.dead_letter(topic)), partitions=partitions, replication_factor=1
    )
    env = service_env(
        url,
        KAFKA_BOOTSTRAP_SERVERS=bootstrap,
        FEEDBACKLOOP_TOPIC_PREFIX=prefix,
        FEEDBACKLOOP_INBOUND_GROUP_ID=group,
    )
    started: list[subprocess.Popen[bytes]] = []
    placed = commands(total, run, partitions)
    producer = producer_for(bootstrap)
    pool = await asyncpg.create_pool(url, min_size=1, max_size=2)
    try:
        await producer.start()
        started += start_inbound(env, processes, logs)
        await group_stable(bootstrap, group, processes)
        before = await stored_commands(pool)
        head = await pool.fetchval(HEAD)
        cpu0 = [cpu_seconds(p.pid) or 0.0 for p in started]
        t0 = time.perf_counter()
        await send(producer, topic, placed)
        sent = time.perf_counter() - t0
        async with asyncio.timeout(600):  # a command that never applies fails the part
            while (now := await applied_by_now(pool, head, total)) < (
                before[0] + total,
                before[1] + total,
            ):
                if any(p.poll() is not None for p in started):
                    raise RuntimeError(f"an inbound process ended early: see {logs}")
                await asyncio.sleep(0.02)
        seconds = time.perf_counter() - t0
        cpu = [(cpu_seconds(p.pid) or 0.0) - c for p, c in zip(started, cpu0, strict=True)]
        await asyncio.sleep(1)  # anything applied twice would show by now
        after = await stored_commands(pool)
    finally:
        await producer.stop()
        for process in started:
            process.send_signal(signal.SIGTERM)
        for process in started:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
        await pool.close()
    return {
        "processes": processes,
        "partitions": partitions,
        "commands": total,
        "seconds": round(seconds, 3),
        "sending_seconds": round(sent, 3),
        "commands_per_s": total / seconds,
        "exactly_once": after == now == (before[0] + total, before[1] + total),
        "cpu_seconds": [round(c, 3) for c in cpu],
        "cpu_us_per_command": round(sum(cpu) * 1e6 / total, 1),
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


# ------------------------------------------------------- relay vs a plain aiokafka producer


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
