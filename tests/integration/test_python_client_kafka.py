"""The Python client's Kafka module (feedbackloop_client.kafka, decisions D208) with a real
broker: a RecordFeedback command it produces is applied once by the service's inbound
consumer, what the relay then publishes it reads back checked against the published schema,
and a message that breaks its topic's schema is refused naming the field, before sending."""

import asyncio
import uuid

import pytest
from feedbackloop_client import ValidationFailed
from feedbackloop_client.kafka import Producer, check, consume, record_feedback_event

from contracts import topics
from services.processes.bootstrap import Runtime
from tests.integration.test_relay import relay_for, run_until_published
from tests.kafka_peer import feedback_recorded, inbound, settled

DATA = {"project_id": "p", "subject_kind": "run", "subject_ref": "run-k", "kind": "rating"}


async def test_a_command_produced_is_recorded_and_its_event_read_back(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    await kafka_runtime.ensure_topics()
    prefix = kafka_runtime.settings.topic_prefix
    async with Producer(kafka_bootstrap, source="urn:neighbour", topic_prefix=prefix) as producer:
        sent = await producer.record_feedback(tenant="tenant-k", actor="svc-k", **DATA, rating=4)
        await producer.send(topics.RECORD_FEEDBACK, sent)  # a repeat: the same id, one command
    async with inbound(kafka_runtime) as consumer:
        await settled(consumer, 2)
    assert await feedback_recorded(kafka_runtime) == 1

    await run_until_published(kafka_runtime, relay_for(kafka_runtime), 1)
    events = consume(
        kafka_bootstrap, topics.FEEDBACK_RECORDED, group=f"g-{uuid.uuid4().hex[:6]}",
        topic_prefix=prefix, from_beginning=True,
    )  # fmt: skip
    async with asyncio.timeout(60):
        event = await anext(events)
    await events.aclose()
    assert event["type"] == "evaluation.feedback.v1.FeedbackRecorded"
    assert (event["tenantid"], event["data"]["rating"]) == ("tenant-k", 4)


async def test_a_message_that_breaks_its_schema_is_refused_naming_the_field() -> None:
    event = record_feedback_event("t", "a", "urn:n", {"projectId": "p", "subjectKind": "run",
                                  "subjectRef": "r", "kind": "rating", "rating": 9})  # fmt: skip
    with pytest.raises(ValidationFailed) as refused:
        check(topics.RECORD_FEEDBACK, event)
    assert refused.value.field == "data.rating"
    del event["tenantid"]
    with pytest.raises(ValidationFailed) as missing:
        check(topics.RECORD_FEEDBACK, {**event, "data": {**event["data"], "rating": 2}})
    assert missing.value.field == "tenantid"
    with pytest.raises(KeyError):
        check("evaluation.unknown.v1.nothing", event)
