"""PostgreSQL restarted with ``pg_ctl restart -m immediate``, and the Kafka broker
stopped and started, while commands arrive: every reader recovers by itself, without a
process restart, and nothing is lost or doubled.

These tests start servers of their own (the session's are shared with every other test)."""

import asyncio
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import asyncpg
import pytest

from tests import servers
from tests.conftest import Keys, with_database
from tests.faults.fleet import COMMANDS, RESTARTS, ROLES, Load, running_fleet

pytestmark = pytest.mark.timeout(1200)
SECONDS_BETWEEN_RESTARTS = 8.0
local_kafka = servers.local_kafka
local_postgres = servers.local_postgres


@pytest.fixture(scope="module")
def own_postgres() -> Iterator[local_postgres.PostgresServer]:
    workdir = Path(tempfile.mkdtemp(prefix="fl-fault-pg-"))
    server = local_postgres.start_postgres(workdir, fast=False)  # durable: commits survive
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


class Broker:
    """A broker of the test's own that can be stopped and started on the same address."""

    def __init__(self) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix="fl-fault-kafka-"))
        self.server = local_kafka.start_kafka(self.workdir)
        self.bootstrap = self.server.bootstrap

    def restart(self, down_for: float) -> None:
        self.server.stop(remove_data=False)
        time.sleep(down_for)
        self.server = local_kafka.start_kafka(self.workdir, keep_data=True)
        assert self.server.bootstrap == self.bootstrap

    def close(self) -> None:
        self.server.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


@pytest.fixture(scope="module")
def own_broker() -> Iterator[Broker]:
    broker = Broker()
    try:
        yield broker
    finally:
        broker.close()


async def fresh_database(server: local_postgres.PostgresServer) -> str:
    name = f"f_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(server.url)
    try:
        await admin.execute(f"CREATE DATABASE {name}")
    finally:
        await admin.close()
    return with_database(server.url, name)


async def under_load(load: Load, fault: Callable[[], None], restarts: int) -> None:
    """Run the load, and ``fault`` (a blocking call) ``restarts`` times spread across it;
    each fault must land while commands are still arriving."""

    async def faults() -> None:
        for _ in range(restarts):
            await asyncio.sleep(load.seconds / (restarts + 1))
            assert 0 < load.sent < load.commands
            await asyncio.to_thread(fault)
            assert load.sent < load.commands

    await asyncio.gather(load.run(), faults())


async def test_postgres_restarted_immediately_under_load(
    own_postgres: local_postgres.PostgresServer,
    kafka_bootstrap: str,
    keys: Keys,
    tmp_path: Path,
) -> None:
    database_url = await fresh_database(own_postgres)
    prefix = f"p{uuid.uuid4().hex[:6]}."
    with running_fleet(database_url, kafka_bootstrap, keys.entries, tmp_path, prefix) as fleet:
        await fleet.wait_for_api()
        seconds = (RESTARTS + 1) * SECONDS_BETWEEN_RESTARTS
        load = Load(fleet.url, keys.a, kafka_bootstrap, prefix, commands=COMMANDS, seconds=seconds)
        await under_load(load, own_postgres.restart, RESTARTS)

        await fleet.assert_exactly_once(load)
        assert fleet.starts == dict.fromkeys(ROLES, 1)  # nobody restarted a process


async def test_kafka_broker_stopped_and_started_under_load(
    database_url: str, own_broker: Broker, keys: Keys, tmp_path: Path
) -> None:
    prefix = f"k{uuid.uuid4().hex[:6]}."
    kafka = own_broker.bootstrap
    with running_fleet(database_url, kafka, keys.entries, tmp_path, prefix) as fleet:
        await fleet.wait_for_api()
        seconds = (RESTARTS + 1) * SECONDS_BETWEEN_RESTARTS
        load = Load(fleet.url, keys.a, kafka, prefix, commands=COMMANDS, seconds=seconds)
        await under_load(load, lambda: own_broker.restart(down_for=3), RESTARTS)

        await fleet.assert_exactly_once(load)
        assert fleet.starts == dict.fromkeys(ROLES, 1)  # nobody restarted a process
        assert load.kafka_retries > 0  # the broker was away while commands were sent
