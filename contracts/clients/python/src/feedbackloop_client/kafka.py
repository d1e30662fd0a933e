"""The service's CloudEvents on Kafka (docs/kafka.md), for a neighbour service: send a command
(``evaluation.feedback.v1.record-feedback``) and read what the service publishes, every
message checked against its published JSON Schema, shipped in this package (``schemas/``,
copied from contracts/schemas by ``make client``: decisions D208). Needs the ``kafka`` extra.

    async with Producer(bootstrap, source="urn:my-service") as producer:
        await producer.record_feedback(tenant="acme", actor="svc", project_id="p", ...)
    async for event in consume(bootstrap, "evaluation.feedback.v1.feedback-recorded", group="me"):
        ...
"""

import json
import uuid
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from typing import Any

import jsonschema_rs
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from feedbackloop_client import models
from feedbackloop_client.calls import body
from feedbackloop_client.errors import ValidationFailed

RECORD_FEEDBACK = "evaluation.feedback.v1.record-feedback"
CONTENT_TYPE = b"application/cloudevents+json"


@cache
def carried() -> dict[str, str]:
    """Each topic and the schema file of its messages (schemas/topics.json)."""
    text = resources.files("feedbackloop_client").joinpath("schemas/topics.json").read_text()
    table: dict[str, str] = json.loads(text)
    return table


@cache
def validator(topic: str) -> Any:
    name = carried().get(topic)
    if name is None:
        raise KeyError(f"{topic} is no topic of the service's contracts (schemas/topics.json)")
    schema = resources.files("feedbackloop_client").joinpath(f"schemas/{name}").read_text()
    return jsonschema_rs.validator_for(json.loads(schema))


def field_of(error: Any) -> str:
    """The dotted path of what is wrong; a missing property is named itself, not its parent."""
    path = [str(part) for part in error.instance_path]
    missing = getattr(error.kind, "property", None)
    return ".".join([*path, str(missing)] if missing is not None else path)


def check(topic: str, event: Mapping[str, Any]) -> None:
    """Raise ``ValidationFailed`` naming the first field of ``event`` its topic's schema
    refuses (dotted: ``data.rating``)."""
    problems = [
        {"field": field_of(error), "message": error.message}
        for error in validator(topic).iter_errors(dict(event))
    ]
    if problems:
        first = problems[0]
        body_ = {
            "error": "invalid",
            "message": first["message"],
            "field": first["field"],
            "problems": problems,
        }
        raise ValidationFailed(0, body_)


def topic_name(prefix: str, topic: str) -> str:
    """A deployment may prefix every topic (``FEEDBACKLOOP_TOPIC_PREFIX``)."""
    return f"{prefix}{topic}"


def record_feedback_event(
    tenant: str, actor: str, source: str, data: Mapping[str, Any], event_id: str | None = None
) -> dict[str, Any]:
    """A RecordFeedback command as a structured CloudEvent; ``id`` is the command's
    idempotency key: sending it again records nothing new."""
    return {
        "specversion": "1.0",
        "id": event_id or str(uuid.uuid4()),
        "source": source,
        "type": "evaluation.feedback.v1.RecordFeedback",
        "time": datetime.now(UTC).isoformat(),
        "tenantid": tenant,
        "actor": actor,
        "datacontenttype": "application/json",
        "data": dict(data),
    }


class Producer:
    """Commands to the service, each checked before it is sent."""

    def __init__(self, bootstrap_servers: str, *, source: str, topic_prefix: str = "") -> None:
        self.source, self.prefix = source, topic_prefix
        self.kafka = AIOKafkaProducer(bootstrap_servers=bootstrap_servers, acks="all")

    async def __aenter__(self) -> "Producer":
        await self.kafka.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.kafka.stop()

    async def send(self, topic: str, event: Mapping[str, Any], key: str | None = None) -> None:
        check(topic, event)
        await self.kafka.send_and_wait(
            topic_name(self.prefix, topic),
            value=json.dumps(event).encode(),
            key=None if key is None else key.encode(),
            headers=[("content-type", CONTENT_TYPE)],
        )

    async def record_feedback(
        self, *, tenant: str, actor: str, event_id: str | None = None,
        feedback: models.RecordFeedback | None = None, **fields: Any,
    ) -> dict[str, Any]:  # fmt: skip
        """Send RecordFeedback; answers the event sent (its ``id`` is the idempotency key)."""
        data = body(models.RecordFeedback, feedback, fields)
        event = record_feedback_event(tenant, actor, self.source, data, event_id)
        await self.send(RECORD_FEEDBACK, event, key=f"{tenant}/{data['subjectRef']}")
        return event


async def consume(
    bootstrap_servers: str, *topics: str, group: str, topic_prefix: str = "",
    from_beginning: bool = False,
) -> AsyncIterator[dict[str, Any]]:  # fmt: skip
    """Every event published on ``topics`` as a dict, each checked against its schema (a
    message that breaks it raises ``ValidationFailed`` naming the field: the contract is
    broken, and reading on would hide it)."""
    names = {topic_name(topic_prefix, topic): topic for topic in topics}
    for topic in topics:
        validator(topic)  # an unknown topic fails here, before connecting
    consumer = AIOKafkaConsumer(
        *names, bootstrap_servers=bootstrap_servers, group_id=group,
        auto_offset_reset="earliest" if from_beginning else "latest",
    )  # fmt: skip
    await consumer.start()
    try:
        async for message in consumer:
            event: dict[str, Any] = json.loads(message.value or b"null")
            check(names[message.topic], event)
            yield event
    finally:
        await consumer.stop()
