"""Inbound messages park where log events do (``services.followers.parking``), and the one
``feedbackloop parked`` operates both, on a real PostgreSQL and Kafka: listed and counted by
reader ``inbound``, shown with their kept trace, sent again to their topic when kept whole,
refused a retry (and skipped) when only their head was kept."""

from aiokafka.structs import ConsumerRecord

from contracts import topics
from contracts.errors import Refused
from services.followers.parked import list_parked, show_parked, skip
from services.followers.parking import INBOUND, parked_by_reader
from services.kafka.inbound.parking import HEAD_BYTES, park, send_again
from services.processes.bootstrap import Runtime
from tests.kafka_peer import consume


def message(topic: str, offset: int, value: bytes) -> ConsumerRecord[bytes, bytes]:
    return ConsumerRecord(
        topic=topic,
        partition=0,
        offset=offset,
        timestamp=0,
        timestamp_type=0,
        key=b"k",
        value=value,
        checksum=None,
        serialized_key_size=1,
        serialized_value_size=len(value),
        headers=[("content-type", b"application/cloudevents+json")],
    )


async def test_a_parked_message_is_listed_shown_sent_again_or_skipped(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    await kafka_runtime.ensure_topics()
    topic = kafka_runtime.settings.topic_prefix + topics.RECORD_FEEDBACK
    whole, big = message(topic, 3, b'{"small": true}'), message(topic, 4, b"x" * 3 * HEAD_BYTES)
    refused = Refused("too big for its dead-letter topic", field="value")
    for record in (whole, big, whole):  # the first one redelivered: parked once
        await park(kafka_runtime.pool, record, refused, "not dead-lettered")

    parked = await list_parked(kafka_runtime.pool, INBOUND)
    assert [(p.offset, p.code, p.subject) for p in parked] == [
        (3, "refused", f"{topic}[0]@3"),
        (4, "refused", f"{topic}[0]@4"),
    ]
    assert "not dead-lettered" in parked[0].error
    assert await parked_by_reader(kafka_runtime.pool) == {INBOUND: 2}
    shown = await show_parked(kafka_runtime.pool, INBOUND, parked[0].position)
    assert shown is not None
    assert (shown["head"], shown["key"]) == (whole.value, b"k")
    assert shown["headers"] == [["content-type", "application/cloudevents+json"]]

    assert await send_again(kafka_runtime.pool, kafka_bootstrap, parked[0].position) is None
    [again] = await consume(kafka_bootstrap, topic, 1)
    assert (again.value, again.key, list(again.headers)) == (whole.value, b"k", whole.headers)
    why_not = await send_again(kafka_runtime.pool, kafka_bootstrap, parked[1].position)
    assert why_not is not None
    assert "are kept" in why_not
    assert [p.offset for p in await list_parked(kafka_runtime.pool, INBOUND)] == [4]

    assert await skip(kafka_runtime.pool, INBOUND, parked[1].position)
    assert await list_parked(kafka_runtime.pool) == []
