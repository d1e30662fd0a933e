"""Kafka plumbing shared by the relay and the inbound consumers."""

import logging

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError

log = logging.getLogger(__name__)


async def ensure_topics(
    bootstrap: str, names: tuple[str, ...], partitions: int, replication_factor: int
) -> None:
    """Create our topics with their configured partitions; never rely on auto-creation."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [
            NewTopic(name, num_partitions=partitions, replication_factor=replication_factor)
            for name in names
            if name not in existing
        ]
        if not missing:
            return
        response = await admin.create_topics(missing)
        for topic, code, *message in response.topic_errors:
            # Another process may have created it meanwhile: that is fine.
            if code not in (0, TopicAlreadyExistsError.errno):
                raise RuntimeError(f"cannot create topic {topic}: error {code} {message}")
        log.info("created topics %s", ", ".join(t.name for t in missing))
    finally:
        await admin.close()
