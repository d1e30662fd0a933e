"""The service as separate processes (api, projector, relay, inbound), a load of commands over
HTTP and Kafka, and what must hold after faults: every command has exactly one effect in the
store, every event is on Kafka at least once, every read model holds each item exactly once.

The scale comes from the environment, so that ``make test`` runs a short version and
``make test-faults`` the long one: ``FEEDBACKLOOP_FAULT_COMMANDS`` (commands, half over each
path), ``FEEDBACKLOOP_FAULT_KILLS`` (kill -9 of each reader process) and
``FEEDBACKLOOP_FAULT_RESTARTS`` (restarts of each server).
"""

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import httpx
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.errors import KafkaError

from contracts import topics
from services.kafka.publication import cloudevent_id
from tests.e2e.conftest import free_port
from tests.kafka_peer import record_feedback_event

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = int(os.environ.get("FEEDBACKLOOP_FAULT_COMMANDS", "300"))
KILLS = int(os.environ.get("FEEDBACKLOOP_FAULT_KILLS", "3"))
RESTARTS = int(os.environ.get("FEEDBACKLOOP_FAULT_RESTARTS", "1"))
ROLES = ("api", "projector", "relay", "inbound")
READERS = ("relay", "projector", "inbound")
SECONDS_BETWEEN_KILLS = 1.7  # a reader lives about 5 s between two kills of it
KAFKA_TENANT = "tenant-faults"


class Processes:
    """The service's processes by name, each logging to a file of its own under ``logs``:
    killed with -9, stopped, and their logs' tails for a failure's message."""

    processes: dict[str, subprocess.Popen[bytes]]
    logs: Path

    def kill9(self, role: str) -> None:
        process = self.processes[role]
        process.send_signal(signal.SIGKILL)
        process.wait(10)

    def exited(self) -> dict[str, int | None]:
        """Processes that ended by themselves (a supervised process never should)."""
        return {role: p.poll() for role, p in self.processes.items() if p.poll() is not None}

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.terminate()
        for process in self.processes.values():
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()

    def tail(self) -> str:
        return "\n".join(
            f"--- {log.name} ---\n{log.read_text()[-3000:]}" for log in sorted(self.logs.glob("*"))
        )


@dataclass
class Fleet(Processes):
    """Each process of the service on its own, started, killed and restarted by role."""

    env: dict[str, str]
    logs: Path
    url: str
    prefix: str
    database_url: str
    kafka: str
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    starts: Counter[str] = field(default_factory=Counter)

    def start(self, *roles: str) -> None:
        for role in roles:
            self.starts[role] += 1
            with (self.logs / f"{role}.log").open("a") as out:
                out.write(f"\n===== start {self.starts[role]} =====\n")
                out.flush()
                self.processes[role] = subprocess.Popen(
                    [sys.executable, "-m", "services.processes.cli", role],
                    cwd=ROOT,
                    env=self.env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )

    async def wait_for_api(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient() as client:
            while time.monotonic() < deadline:
                with contextlib.suppress(httpx.HTTPError):
                    if (await client.get(f"{self.url}/healthz", timeout=1)).status_code == 200:
                        return
                await asyncio.sleep(0.2)
        raise AssertionError(f"the api did not come up\n{self.tail()}")

    def status(self) -> subprocess.CompletedProcess[str]:
        """``feedbackloop status``: exit 0 when every reader is alive, caught up, unparked."""
        return subprocess.run(
            [sys.executable, "-m", "services.processes.cli", "status"],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    async def assert_exactly_once(self, load: "Load") -> None:
        """Once the dust settles: every command has exactly one effect, every event is on
        Kafka, the read model holds each item once, nothing is parked, every process still
        runs, and ``feedbackloop status`` says all is well."""
        outcome = await settled(self.database_url, self.kafka, self.prefix, load.expected)
        assert outcome.problems(load.expected) == [], self.tail()
        assert self.exited() == {}, self.tail()
        # A process killed a moment ago still counts as running until its heartbeat is older
        # than FEEDBACKLOOP_READER_MAX_SILENCE_SECONDS (here 10 s): status may say what it
        # last did until then.
        deadline = time.monotonic() + 60
        while (status := self.status()).returncode != 0 and time.monotonic() < deadline:
            await asyncio.sleep(2)
        assert status.returncode == 0, status.stdout + status.stderr


@contextlib.contextmanager
def running_fleet(
    database_url: str, kafka: str, api_keys: str, logs: Path, prefix: str
) -> Iterator[Fleet]:
    """Every process started at once on a (usually empty) database, stopped afterwards."""
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "KAFKA_BOOTSTRAP_SERVERS": kafka,
        "FEEDBACKLOOP_API_KEYS": api_keys,
        "FEEDBACKLOOP_PORT": str(port),
        "FEEDBACKLOOP_TOPIC_PREFIX": prefix,
        "FEEDBACKLOOP_INBOUND_GROUP_ID": f"{prefix}inbound",
        "FEEDBACKLOOP_METRICS_PORT": "0",  # several processes on one host: no metrics port each
        "FEEDBACKLOOP_READER_MAX_SILENCE_SECONDS": "10",
    }
    fleet = Fleet(env, logs, f"http://127.0.0.1:{port}", prefix, database_url, kafka)
    fleet.start(*ROLES)
    try:
        yield fleet
    finally:
        fleet.stop()


@dataclass
class Load:
    """``commands`` RecordFeedback commands, half over HTTP and half over Kafka, spread over
    ``seconds``. Each names its own subject (``http-7``, ``kafka-7``) so that its effect can
    be counted. Senders retry as a neighbour would: HTTP with the same Idempotency-Key until
    it is answered, Kafka until the broker acknowledges; every tenth Kafka command is sent
    twice on purpose (a redelivery the service must recognise by the command's identity)."""

    url: str
    key: str
    kafka: str
    prefix: str
    commands: int = COMMANDS
    seconds: float = 10.0
    sent: int = 0  # commands sent so far (a redelivery counted once)
    http_retries: int = 0
    kafka_retries: int = 0

    @property
    def expected(self) -> set[str]:
        half = self.commands // 2
        return {f"http-{i}" for i in range(half)} | {
            f"kafka-{i}" for i in range(self.commands - half)
        }

    async def run(self) -> None:
        half = self.commands // 2
        await asyncio.gather(self._http(half), self._kafka(self.commands - half))

    def _interval(self, count: int) -> float:
        return self.seconds / max(count, 1)

    async def _http(self, count: int) -> None:
        gate = asyncio.Semaphore(8)
        async with httpx.AsyncClient(
            base_url=self.url, headers={"Authorization": f"Bearer {self.key}"}, timeout=10
        ) as client:

            async def send(i: int) -> None:
                body = {
                    "projectId": "faults",
                    "subjectKind": "run",
                    "subjectRef": f"http-{i}",
                    "kind": "rating",
                    "rating": 1 + i % 5,
                }
                async with gate:
                    deadline = time.monotonic() + 120
                    while True:
                        with contextlib.suppress(httpx.HTTPError):
                            answer = await client.post(
                                "/factory/feedback", json=body, headers={"Idempotency-Key": f"k{i}"}
                            )
                            if answer.status_code in (200, 201):
                                return
                            assert answer.status_code >= 500, answer.text  # never a 4xx here
                        if time.monotonic() > deadline:
                            raise AssertionError(f"http-{i} was never accepted")
                        self.http_retries += 1
                        await asyncio.sleep(0.3)

            sends = []
            for i in range(count):
                sends.append(asyncio.create_task(send(i)))
                self.sent += 1
                await asyncio.sleep(self._interval(count))
            await asyncio.gather(*sends)

    async def _kafka(self, count: int) -> None:
        topic = self.prefix + topics.RECORD_FEEDBACK
        producer = AIOKafkaProducer(
            bootstrap_servers=self.kafka, acks="all", request_timeout_ms=5000
        )
        await self._until_started(producer)
        try:
            for i in range(count):
                data = {
                    "projectId": "faults",
                    "subjectKind": "run",
                    "subjectRef": f"kafka-{i}",
                    "kind": "escalation",
                }
                value = record_feedback_event(KAFKA_TENANT, "svc-load", data, f"kafka-{i}")
                for _ in range(2 if i % 10 == 0 else 1):
                    await self._send(producer, topic, value, f"k{i % 24}".encode())
                self.sent += 1
                await asyncio.sleep(self._interval(count))
        finally:
            await producer.stop()

    async def _until_started(self, producer: AIOKafkaProducer) -> None:
        for _ in range(120):
            try:
                await producer.start()
                return
            except KafkaError:
                await asyncio.sleep(1)
        raise AssertionError("the load's producer never reached Kafka")

    async def _send(self, producer: AIOKafkaProducer, topic: str, value: bytes, key: bytes) -> None:
        deadline = time.monotonic() + 120
        while True:
            try:
                await producer.send_and_wait(topic, value=value, key=key)
                return
            except KafkaError:
                if time.monotonic() > deadline:
                    raise
                self.kafka_retries += 1
                await asyncio.sleep(0.5)


@dataclass
class Outcome:
    """What the store, a read model and Kafka hold of the load's commands."""

    store: Counter[str]  # subjectRef → Feedback.Recorded events
    read_model: Counter[str]  # subjectRef → rows in the feedback list
    store_ids: set[str]  # the CloudEvent id each stored event is published with
    on_kafka: set[str]  # CloudEvent ids seen on the published topic
    parked: int
    inbound_parked: int

    def problems(self, expected: set[str]) -> list[str]:
        found = []
        if missing := expected - set(self.store):
            found.append(f"{len(missing)} commands without effect, e.g. {sorted(missing)[:5]}")
        if doubled := {ref for ref, n in self.store.items() if n > 1}:
            found.append(f"{len(doubled)} commands applied twice, e.g. {sorted(doubled)[:5]}")
        if stray := set(self.store) - expected:
            found.append(f"{len(stray)} effects of no command: {sorted(stray)[:5]}")
        if self.read_model != Counter(dict.fromkeys(expected, 1)):
            short = expected - set(self.read_model)
            twice = {ref for ref, n in self.read_model.items() if n > 1}
            found.append(f"read model: {len(short)} missing, {len(twice)} twice")
        if unpublished := self.store_ids - self.on_kafka:
            found.append(f"{len(unpublished)} events never reached Kafka")
        if self.parked or self.inbound_parked:
            found.append(f"parked: {self.parked} events, {self.inbound_parked} messages")
        return found


async def observe(
    database_url: str, kafka: str, prefix: str, consumer: AIOKafkaConsumer
) -> Outcome:
    connection = await asyncpg.connect(database_url)
    try:
        events = await connection.fetch(
            "SELECT originator_id, originator_version, convert_from(state, 'UTF8') AS state "
            "FROM feedbackloop_events WHERE topic = $1",
            "services.feedback.domain:Feedback.Recorded",
        )
        rows = await connection.fetch("SELECT subject_ref FROM rm_feedback_list.feedback")
        parked = await connection.fetchval("SELECT count(*) FROM parked WHERE reader <> 'inbound'")
        inbound_parked = await connection.fetchval(
            "SELECT count(*) FROM parked WHERE reader = 'inbound'"
        )
    finally:
        await connection.close()
    on_kafka = set()
    for records in (await consumer.getmany(timeout_ms=1000, max_records=100_000)).values():
        on_kafka.update(json.loads(record.value)["id"] for record in records)
    return Outcome(
        store=Counter(json.loads(e["state"])["subject_ref"] for e in events),
        read_model=Counter(row["subject_ref"] for row in rows),
        store_ids={cloudevent_id(e["originator_id"], e["originator_version"]) for e in events},
        on_kafka=on_kafka,
        parked=parked,
        inbound_parked=inbound_parked,
    )


async def settled(
    database_url: str, kafka: str, prefix: str, expected: set[str], timeout: float = 180
) -> Outcome:
    """Wait until the store, the read model and Kafka hold every command's effect (or the
    timeout passes), and answer what they hold."""
    consumer = AIOKafkaConsumer(
        prefix + topics.FEEDBACK_RECORDED,
        bootstrap_servers=kafka,
        group_id=f"{prefix}checker",
        auto_offset_reset="earliest",
    )
    await consumer.start()
    seen: set[str] = set()
    try:
        deadline = time.monotonic() + timeout
        while True:
            outcome = await observe(database_url, kafka, prefix, consumer)
            seen |= outcome.on_kafka
            outcome.on_kafka = seen
            if not outcome.problems(expected) or time.monotonic() > deadline:
                return outcome
            await asyncio.sleep(1)
    finally:
        await consumer.stop()
