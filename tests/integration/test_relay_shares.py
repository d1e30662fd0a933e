"""The relay in shares on a real broker (decisions D270–D274): two shares publish every event
once between them, in each partition's order; one layout at a time; a new layout starts where
the old one left off."""

import asyncio
import dataclasses
import json
from collections import Counter
from typing import Any

from aiokafka.partitioner import DefaultPartitioner, murmur2

from contracts import topics
from services.followers.parked import list_parked, release
from services.followers.positions import read_position
from services.kafka.layout import holding_layout
from services.kafka.relay import Relay
from services.kafka.shares import WHOLE, Share
from services.processes.bootstrap import Runtime
from services.processes.published import PUBLICATIONS
from tests.integration.test_relay import follower_for, published, record, relay_for
from tests.kafka_peer import consume


async def run_shares(runtime: Runtime, relays: list[Relay], count: int) -> None:
    """Run the relays side by side until they published ``count`` events between them."""
    stop = asyncio.Event()
    tasks = [asyncio.create_task(follower_for(runtime, relay).run(stop)) for relay in relays]
    try:
        await published(relays, count)
    finally:
        stop.set()
        await asyncio.gather(*tasks)


def shares_of(runtime: Runtime, count: int) -> list[Relay]:
    return [relay_for(runtime, share=Share(i, count)) for i in range(1, count + 1)]


async def on_kafka(runtime: Runtime, bootstrap: str, count: int) -> list[Any]:
    topic = runtime.settings.topic_prefix + topics.FEEDBACK_RECORDED
    return await consume(bootstrap, topic, count)


async def test_two_shares_publish_every_event_once_between_them_in_order(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    """D270, D272: each aggregate in one share; with N dividing the partitions, each
    partition written by one share, in log order."""
    await kafka_runtime.ensure_topics()
    ids = await record(kafka_runtime, 40)
    relays = shares_of(kafka_runtime, 2)
    await run_shares(kafka_runtime, relays, 40)

    messages = await on_kafka(kafka_runtime, kafka_bootstrap, 40)
    assert Counter(json.loads(m.value)["subject"] for m in messages) == Counter(ids)
    assert all(relay.published > 0 for relay in relays)  # both did their part
    partitions = list(range(kafka_runtime.settings.topic_partitions))
    assert len(partitions) % 2 == 0
    for partition in partitions:
        keys = [m.key.decode() for m in sorted(messages, key=lambda m: m.offset)
                if m.partition == partition]  # fmt: skip
        assert keys == [i for i in ids if i in keys]  # in the order recorded
    for message in messages:  # a share is its partitions modulo N here
        assert message.partition == DefaultPartitioner()(message.key, partitions, partitions)
    head = kafka_runtime.store.recorder.max_notification_id()
    for relay in relays:
        assert await read_position(kafka_runtime.pool, relay.name) == head
    assert [relay.name for relay in relays] == ["relay-1of2", "relay-2of2"]


async def test_a_share_parks_its_own_and_a_new_layout_takes_them_over(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    """D271, D274: an event one share cannot publish is parked by that share alone, the other
    publishes all of its own; the next layout's share of that aggregate takes it over."""
    await kafka_runtime.ensure_topics()
    ids = await record(kafka_runtime, 10)
    poison = ids[0]
    broken = {poison}
    publication, *_ = PUBLICATIONS

    def mapping(event: Any) -> Any:
        if str(event.originator_id) in broken:
            raise ValueError("this payload does not map")
        return publication.to_contract(event)

    failing = [dataclasses.replace(publication, to_contract=mapping)]
    relays = [relay_for(kafka_runtime, share=Share(i, 2), publications=failing) for i in (1, 2)]
    await run_shares(kafka_runtime, relays, 9)
    owner = Share(1, 2).of_hash(murmur2(poison.encode()))
    parked = {r.name: await list_parked(kafka_runtime.pool, r.name) for r in relays}
    assert [str(p.originator_id) for p in parked[f"relay-{owner}of2"]] == [poison]
    assert parked[f"relay-{3 - owner}of2"] == []

    broken.clear()  # the fix, and back to one relay
    whole = relay_for(kafka_runtime)
    stop = asyncio.Event()
    task = asyncio.create_task(follower_for(kafka_runtime, whole).run(stop))
    try:
        while not await list_parked(kafka_runtime.pool, "relay"):  # carried over when it leads
            await asyncio.sleep(0.05)
        assert await release(kafka_runtime.pool, "relay") == 1
        await published([whole], 1)
    finally:
        stop.set()
        await task
    messages = await on_kafka(kafka_runtime, kafka_bootstrap, 10)
    assert Counter(json.loads(m.value)["subject"] for m in messages) == Counter(ids)


async def test_shares_started_after_a_whole_relay_stopped_publish_what_it_had_not(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    """D274: the new layout starts at the old one's position; nothing is lost, the old reader
    is forgotten."""
    await kafka_runtime.ensure_topics()
    first = await record(kafka_runtime, 6)
    await run_shares(kafka_runtime, [relay_for(kafka_runtime)], 6)
    later = await record(kafka_runtime, 6)  # after the whole relay stopped

    relays = shares_of(kafka_runtime, 2)
    await run_shares(kafka_runtime, relays, 6)

    messages = await on_kafka(kafka_runtime, kafka_bootstrap, 12)
    assert Counter(json.loads(m.value)["subject"] for m in messages) == Counter(first + later)
    assert sum(relay.published for relay in relays) == 6  # none of the first six again
    readers = await kafka_runtime.pool.fetch(
        "SELECT reader FROM reader_positions WHERE reader LIKE 'relay%' ORDER BY reader"
    )
    assert [row["reader"] for row in readers] == ["relay-1of2", "relay-2of2"]


async def test_one_relay_after_two_shares_starts_at_the_lower_and_loses_nothing(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    """D274: back from two shares, one of which had gone further, to one relay: it starts
    where the one behind stood, publishing the other's events since then again (same ids)."""
    await kafka_runtime.ensure_topics()
    first = await record(kafka_runtime, 8)
    await run_shares(kafka_runtime, shares_of(kafka_runtime, 2), 8)
    later = await record(kafka_runtime, 8)
    ahead = relay_for(kafka_runtime, share=Share(1, 2))
    expected_ahead = sum(Share(1, 2).of_hash(murmur2(i.encode())) == 1 for i in later)
    await run_shares(kafka_runtime, [ahead], expected_ahead)  # share 2/2 stays behind

    whole = relay_for(kafka_runtime)
    await run_shares(kafka_runtime, [whole], 8)
    messages = await on_kafka(kafka_runtime, kafka_bootstrap, 8 + 8 + expected_ahead)
    subjects = Counter(json.loads(m.value)["subject"] for m in messages)
    assert set(subjects) == set(first + later)  # none lost
    assert whole.published == 8  # since the lower position: share 1/2's again, 2/2's at last
    head = kafka_runtime.store.recorder.max_notification_id()
    assert await read_position(kafka_runtime.pool, "relay") == head


async def test_a_layout_waits_while_another_publishes_and_goes_on_once_it_stops(
    kafka_runtime: Runtime,
) -> None:
    """D273: a share of two does not publish beside a whole relay; it says why."""
    said: list[str] = []
    waiting = asyncio.Event()

    def say(state: str) -> None:
        said.append(state)
        waiting.set()

    async def share_leads(conn: Any) -> None:
        async with holding_layout(conn, Share(1, 2), say, recheck=0.05):
            pass

    pool = kafka_runtime.pool
    async with pool.acquire() as whole, pool.acquire() as share:
        async with holding_layout(whole, WHOLE, said.append):
            assert said == []  # alone: no wait
            task = asyncio.create_task(share_leads(share))
            await waiting.wait()
            assert not task.done()
            assert said[0].startswith("waiting: a relay in 1 shares publishes")
            # Two shares of one layout hold it side by side.
            async with pool.acquire() as other, holding_layout(other, WHOLE, said.append):
                pass
        await task  # the whole relay let go: the share goes on
