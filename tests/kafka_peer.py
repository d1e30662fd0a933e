"""A stand-in neighbour service: plain aiokafka, none of the project's code."""

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from eventsourcing.utils import get_topic

from services.feedback.domain import Feedback
from services.kafka.inbound import InboundConsumer
from services.processes.bootstrap import Runtime
from services.store.event_store import EVENTS_TABLE


async def consume(bootstrap: str, topic: str, count: int, timeout: float = 60) -> list[Any]:
    """Read ``count`` messages from the start of ``topic`` with a consumer group of its own."""
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=f"peer-{uuid.uuid4().hex[:8]}",
        auto_offset_reset="earliest",
    )
    await consumer.start()
    seen: list[Any] = []
    try:
        async with asyncio.timeout(timeout):
            while len(seen) < count:
                batch = await consumer.getmany(timeout_ms=500)
                for records in batch.values():
                    seen.extend(records)
    except TimeoutError:
        pass
    finally:
        await consumer.stop()
    return seen


async def quiet_for(bootstrap: str, topic: str, seconds: float) -> list[Any]:
    """Everything on ``topic`` after waiting ``seconds`` (to show nothing more arrives)."""
    return await consume(bootstrap, topic, count=10**9, timeout=seconds)


def record_feedback_event(
    tenant: str, actor: str, data: dict[str, Any], event_id: str | None = None
) -> bytes:
    return json.dumps(
        {
            "specversion": "1.0",
            "id": event_id or str(uuid.uuid4()),
            "source": "urn:neighbour-service",
            "type": "evaluation.feedback.v1.RecordFeedback",
            "tenantid": tenant,
            "actor": actor,
            "datacontenttype": "application/json",
            "data": data,
        }
    ).encode()


async def produce(
    bootstrap: str, topic: str, values: list[bytes], key: bytes | None = None
) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        for value in values:
            await producer.send_and_wait(
                topic,
                value=value,
                key=key,
                headers=[("content-type", b"application/cloudevents+json")],
            )
    finally:
        await producer.stop()


async def feedback_recorded(runtime: Runtime) -> int:
    """How many feedback the store holds (each command applied once makes exactly one)."""
    return int(
        await runtime.pool.fetchval(
            f"SELECT count(*) FROM {EVENTS_TABLE} WHERE topic = $1", get_topic(Feedback.Recorded)
        )
    )


async def settled(consumer: InboundConsumer, count: int, timeout: float = 60) -> None:
    async with asyncio.timeout(timeout):
        while consumer.settled < count:
            await asyncio.sleep(0.1)


@asynccontextmanager
async def inbound(runtime: Runtime) -> AsyncIterator[InboundConsumer]:
    consumer = await runtime.start_inbound()
    assert consumer is not None
    try:
        yield consumer
    finally:
        await consumer.stop()
