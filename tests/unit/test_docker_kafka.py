"""The Docker path's broker is the local path's: Apache Kafka of the version ops/kafka/pom.xml
pins, configured as ops/local_kafka.py configures it. No Docker engine is needed to check it."""

import re

import pytest

from tests import servers
from tests.servers import ROOT

pytestmark = pytest.mark.unit


def test_the_docker_path_runs_the_kafka_version_the_local_path_runs() -> None:
    pom = (ROOT / "ops" / "kafka" / "pom.xml").read_text()
    pinned = re.search(r"<kafka.version>([^<]+)</kafka.version>", pom)
    assert pinned is not None
    version = pinned.group(1)
    assert servers.KAFKA_IMAGE.removeprefix("apache/kafka:") == version


def test_the_container_broker_is_configured_as_the_local_one() -> None:
    local = dict(
        line.split("=", 1)
        for line in servers.local_kafka._kafka_properties(ROOT, 1, 2).splitlines()
    )
    container = {
        name.removeprefix("KAFKA_").lower().replace("_", "."): value
        for name, value in servers.KAFKA_ENVIRONMENT.items()
        if name.startswith("KAFKA_")
    }
    for setting in (
        "process.roles",
        "auto.create.topics.enable",
        "offsets.topic.replication.factor",
        "offsets.topic.num.partitions",
        "transaction.state.log.replication.factor",
        "transaction.state.log.min.isr",
        "transaction.state.log.num.partitions",
        "share.coordinator.state.topic.replication.factor",
        "share.coordinator.state.topic.min.isr",
        "group.initial.rebalance.delay.ms",
    ):
        assert container[setting] == local[setting], setting
