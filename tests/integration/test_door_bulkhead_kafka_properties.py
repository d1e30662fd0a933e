"""The bulkhead on a real Kafka broker, as a property: the values of the HTTP property test
(``extreme_values``), produced on the neighbour topics, are each applied or written to
``<topic>.dlt`` with the reason; the consumer parks nothing, no read model parks, and the
partition flows (a good message after the bad ones is applied)."""

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from eventsourcing.application import AggregateNotFoundError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contracts import topics
from services.bus.receipts import receipt_id
from services.kafka.inbound import InboundConsumer
from services.kafka.inbound.parsing import identity
from services.processes.bootstrap import Runtime
from tests.conftest import Keys, client_for
from tests.integration.door_checks import nothing_parked
from tests.integration.extreme_values import TYPES, body, events, filled
from tests.integration.test_digest import tenant_of
from tests.kafka_peer import inbound

GOOD_TYPES = [kind for kind in sorted(TYPES) if "DraftReleaseOpened" not in kind]


@pytest.fixture
async def consumer(kafka_runtime: Runtime) -> AsyncIterator[InboundConsumer]:
    """One consumer (and the read models) for every example of the test."""
    await kafka_runtime.ensure_topics()
    kafka_runtime.start_projections()
    async with inbound(kafka_runtime) as started:
        yield started


@pytest.fixture
async def client(kafka_runtime: Runtime, keys: Keys) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(kafka_runtime, keys.a) as http:
        yield http


def good(kind: str, tenant: str) -> dict[str, Any]:
    """A valid event of the type, for after the drawn ones on the same partition."""
    n = uuid.uuid4().hex[:12]
    return {"specversion": "1.0", "id": f"good-{n}", "source": "urn:neighbour", "type": kind,
            "tenantid": tenant, "data": filled(TYPES[kind][1], n)}  # fmt: skip


def applied(runtime: Runtime, event: Any) -> bool:
    """Whether the event's identity has a receipt: the bus applied it (once)."""
    try:
        key = identity(str(event["tenantid"]), str(event["source"]), str(event["id"]))
        runtime.store.repository.get(receipt_id(key))
    except (AggregateNotFoundError, KeyError, TypeError):
        return False
    return True


async def dead_letters(bootstrap: str, names: list[str], values: set[bytes]) -> dict[bytes, Any]:
    """The dead-letter records holding ``values`` (the originals, unchanged), read from the
    start of ``names`` until all are found or a minute has passed."""
    reader = AIOKafkaConsumer(*names, bootstrap_servers=bootstrap,
                              group_id=f"dlt-{uuid.uuid4().hex[:8]}",
                              auto_offset_reset="earliest")  # fmt: skip
    await reader.start()
    found: dict[bytes, Any] = {}
    try:
        async with asyncio.timeout(60):
            while not values <= found.keys():
                for records in (await reader.getmany(timeout_ms=500)).values():
                    found.update({r.value: r for r in records if r.value in values})
    except TimeoutError:
        pass
    finally:
        await reader.stop()
    return found


async def settled(consumer: InboundConsumer, count: int, timeout: float = 60) -> None:
    async with asyncio.timeout(timeout):
        while consumer.settled < count:
            await asyncio.sleep(0.05)


PROPERTY = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@PROPERTY
@given(batch=st.lists(events(), min_size=4, max_size=12))
async def test_each_drawn_event_is_applied_or_dead_lettered_and_the_partition_flows(
    kafka_runtime: Runtime,
    kafka_bootstrap: str,
    consumer: InboundConsumer,
    client: httpx.AsyncClient,
    keys: Keys,
    batch: list[tuple[str, dict[str, Any], bool]],
) -> None:
    """SPEC C24, C25, C39–C41: one partition key per draw, so the good message of each type
    waits behind the drawn ones of its topic."""
    tenant, key = tenant_of(keys), uuid.uuid4().hex.encode()
    prefix = kafka_runtime.settings.topic_prefix
    sent: list[tuple[str, dict[str, Any], bytes]] = []
    for name, event, raw_nul in batch:
        event["tenantid"] = tenant
        sent.append((prefix + name, event, body(event, raw_nul)))
    goods = [good(kind, tenant) for kind in GOOD_TYPES]
    sent += [(prefix + TYPES[event["type"]][0], event, body(event)) for event in goods]
    before, parked_before = consumer.settled, consumer.parked
    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all")
    await producer.start()
    try:
        for name, _event, value in sent:
            await producer.send_and_wait(name, value=value, key=key)
    finally:
        await producer.stop()
    await settled(consumer, before + len(sent))

    assert consumer.parked == parked_before
    for event in goods:  # the partition flowed past everything drawn before it
        assert applied(kafka_runtime, event), event
    refused = {value: name for name, event, value in sent if not applied(kafka_runtime, event)}
    dlts = sorted({topics.dead_letter(name) for name in refused.values()})
    found = await dead_letters(kafka_bootstrap, dlts, set(refused))
    for value, name in refused.items():
        assert value in found, (name, value[:300])
        headers = dict(found[value].headers)
        assert headers["dlt-original-topic"] == name.encode()
        assert headers["dlt-reason"], headers
    await nothing_parked(kafka_runtime, client)
