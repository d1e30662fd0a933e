"""Kafka plumbing shared by the relay and the inbound consumers."""

import asyncio
import logging

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError

log = logging.getLogger(__name__)


async def ensure_topics(
    bootstrap: str,
    names: tuple[str, ...],
    partitions: int,
    replication_factor: int,
    timeout: float = 60.0,
) -> None:
    """Create our topics with their configured partitions (never rely on auto-creation), and
    return once the broker's metadata lists them all, so a producer or consumer started next
    finds them. A refusal that may pass (a broker briefly fenced under load) is tried again
    until ``timeout``."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        async with asyncio.timeout(timeout):
            pause = 0.2
            while missing := sorted(set(names) - set(await admin.list_topics())):
                response = await admin.create_topics(
                    [NewTopic(n, partitions, replication_factor) for n in missing]
                )
                refused = [
                    (topic, code, message)
                    for topic, code, *message in response.topic_errors
                    # Another process may have created it meanwhile: that is fine.
                    if code not in (0, TopicAlreadyExistsError.errno)
                ]
                if refused:
                    log.warning("cannot create topics yet (%s); trying again", refused)
                else:
                    log.info("created topics %s", ", ".join(missing))
                await asyncio.sleep(pause)
                pause = min(2.0, pause * 2)
    except TimeoutError:
        raise RuntimeError(f"cannot create topics {sorted(names)} within {timeout}s") from None
    finally:
        await admin.close()
