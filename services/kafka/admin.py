"""Kafka plumbing shared by the relay and the inbound consumers."""

import asyncio
import logging

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError
from tenacity import AsyncRetrying, retry_if_exception_type, wait_exponential

log = logging.getLogger(__name__)


class NotYetListed(Exception):
    """Topics asked for (or refused for now) that the broker's metadata does not list yet."""


async def ensure_topics(
    bootstrap: str,
    names: tuple[str, ...],
    partitions: int,
    replication_factor: int,
    timeout: float = 60.0,
) -> None:
    """Create our topics with their configured partitions (never rely on auto-creation), and
    return once the broker's metadata lists them all, so a producer or consumer started next
    finds them. A refusal that may pass (a broker briefly fenced under load) is tried again,
    after a pause that doubles up to 2 s, until ``timeout``."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    retrying = AsyncRetrying(
        retry=retry_if_exception_type(NotYetListed),
        wait=wait_exponential(multiplier=0.2, max=2.0),
    )
    try:
        async with asyncio.timeout(timeout):
            async for attempt in retrying:
                with attempt:
                    await create_missing(admin, names, partitions, replication_factor)
    except TimeoutError:
        raise RuntimeError(f"cannot create topics {sorted(names)} within {timeout}s") from None
    finally:
        await admin.close()


async def create_missing(
    admin: AIOKafkaAdminClient, names: tuple[str, ...], partitions: int, replication_factor: int
) -> None:
    """Create the topics the broker does not list; raises ``NotYetListed`` until it lists
    every one."""
    missing = sorted(set(names) - set(await admin.list_topics()))
    if not missing:
        return
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
    raise NotYetListed(missing)
