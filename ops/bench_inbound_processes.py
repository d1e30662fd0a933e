"""The command topic applied as production runs it (docs/operations.md: Beyond one machine),
a figure of part ``kafka`` (``ops/bench_kafka.py``): N ``feedbackloop inbound`` processes of one
consumer group, settled in the group before the clock starts, timed from the first command sent
to the last one's feedback and receipt in the store, with their CPU per command read from
/proc."""

import asyncio
import signal
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import asyncpg
from aiokafka.admin import AIOKafkaAdminClient
from bench_command_topic import commands, producer_for, send, stored_commands
from bench_feedback import HEAD
from bench_processes import cpu_seconds, feedbackloop, service_env

from contracts import topics
from services.kafka.admin import ensure_topics


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
