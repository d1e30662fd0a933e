"""Two relay processes, ``feedbackloop relay --share 1/2`` and ``--share 2/2``, killed with
SIGKILL in turn while events are recorded (decisions D270–D274): afterwards every event is on
Kafka (none lost) and no event was published by both shares. A share killed after Kafka
acknowledged and before its position moved publishes the same events again: that is the
relay's at-least-once contract (same CloudEvent ``id``), as in ``test_kill_nine``; the other
share publishing them is not.

Each process publishes with a CloudEvent ``source`` of its own, so a record tells which share
sent it. The scale comes from the environment (``FEEDBACKLOOP_FAULT_KILLS``, as the fleet's;
``FEEDBACKLOOP_FAULT_SHARE_EVENTS``), short by default so that ``make test`` runs it."""

import asyncio
import json
import os
import random
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition

from contracts import topics
from services.processes.bootstrap import Runtime
from tests.faults.fleet import KILLS, ROOT, Processes
from tests.integration.test_relay import record

pytestmark = pytest.mark.timeout(300)

EVENTS = int(os.environ.get("FEEDBACKLOOP_FAULT_SHARE_EVENTS", "600"))
SHARES = ("1/2", "2/2")
SECONDS_BETWEEN_KILLS = 1.5


class Shares(Processes):
    """A relay process per share, started, killed and restarted by share."""

    def __init__(self, runtime: Runtime, logs: Path) -> None:
        settings = runtime.settings
        assert settings.database_url
        assert settings.kafka_bootstrap_servers
        self.env = {
            **os.environ,
            "DATABASE_URL": settings.database_url,
            "KAFKA_BOOTSTRAP_SERVERS": settings.kafka_bootstrap_servers,
            "FEEDBACKLOOP_TOPIC_PREFIX": settings.topic_prefix,
            "FEEDBACKLOOP_METRICS_PORT": "0",  # two relays on one host: no metrics port each
        }
        self.logs = logs
        self.processes: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, share: str) -> None:
        with (self.logs / f"relay-{share.replace('/', 'of')}.log").open("a") as out:
            out.write("\n===== start =====\n")
            out.flush()
            self.processes[share] = subprocess.Popen(
                [sys.executable, "-m", "services.processes.cli", "relay", "--share", share],
                cwd=ROOT,
                env={**self.env, "FEEDBACKLOOP_CLOUDEVENTS_SOURCE": f"urn:share:{share}"},
                stdout=out,
                stderr=subprocess.STDOUT,
            )


async def recorded_over(runtime: Runtime, total: int, seconds: float) -> list[str]:
    """``total`` feedbacks recorded in twenty steps spread over ``seconds``."""
    ids: list[str] = []
    for step in range(20):
        ids += await record(runtime, total // 20 + (step < total % 20))
        await asyncio.sleep(seconds / 20)
    return ids


async def kill_nine(shares: Shares, kills: int) -> None:
    """SIGKILL each share's process ``kills`` times, in turn, restarting it at once."""
    for share in [share for _ in range(kills) for share in SHARES]:
        await asyncio.sleep(random.uniform(0.5, 1.5) * SECONDS_BETWEEN_KILLS)
        shares.kill9(share)
        shares.start(share)


async def caught_up(runtime: Runtime, timeout: float = 120) -> None:
    """Both shares' positions at the head of the log."""
    head = runtime.store.recorder.max_notification_id()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        positions = await runtime.pool.fetch(
            "SELECT position FROM reader_positions WHERE reader LIKE 'relay-%of2'"
        )
        if len(positions) == 2 and all(row["position"] >= head for row in positions):
            return
        await asyncio.sleep(0.5)
    raise AssertionError("the shares never caught up")


async def sources_by_id(bootstrap: str, topic: str, count: int) -> dict[str, set[str]]:
    """Every record on ``topic`` (of ``count`` partitions), by subject and CloudEvent id: the
    sources (shares) that sent it."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        partitions = [TopicPartition(topic, p) for p in range(count)]
        ends = await consumer.end_offsets(partitions)
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        sent: dict[str, set[str]] = defaultdict(set)
        reading = [tp for tp in partitions if ends[tp] > 0]
        while reading:
            for records in (await consumer.getmany(*reading, timeout_ms=1000)).values():
                for r in records:
                    envelope = json.loads(r.value)
                    sent[envelope["subject"] + "/" + envelope["id"]].add(envelope["source"])
            reading = [tp for tp in reading if await consumer.position(tp) < ends[tp]]
        return sent
    finally:
        await consumer.stop()


async def test_relay_shares_killed_with_sigkill_lose_nothing_and_share_nothing(
    kafka_runtime: Runtime, kafka_bootstrap: str, tmp_path: Path
) -> None:
    await kafka_runtime.ensure_topics()
    shares = Shares(kafka_runtime, tmp_path)
    for share in SHARES:
        shares.start(share)
    try:
        seconds = KILLS * len(SHARES) * SECONDS_BETWEEN_KILLS
        ids, _ = await asyncio.gather(
            recorded_over(kafka_runtime, EVENTS, seconds), kill_nine(shares, KILLS)
        )
        await caught_up(kafka_runtime)
        assert shares.exited() == {}, shares.tail()
    finally:
        shares.stop()

    topic = kafka_runtime.settings.topic_prefix + topics.FEEDBACK_RECORDED
    sent = await sources_by_id(kafka_bootstrap, topic, kafka_runtime.settings.topic_partitions)
    subjects = {key.split("/")[0] for key in sent}
    assert set(ids) - subjects == set(), shares.tail()  # none lost
    both = {key: sources for key, sources in sent.items() if len(sources) > 1}
    assert both == {}, shares.tail()  # none published by both shares
    assert {source for sources in sent.values() for source in sources} == {
        "urn:share:1/2",
        "urn:share:2/2",
    }
