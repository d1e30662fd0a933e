"""Domain events as integration events: CloudEvents 1.0, structured JSON mode, on Kafka.

Each context declares its public events once, as ``Publication`` values in its
``published.py``: the event class, the topic, the CloudEvent type, the payload model, the
mapping from event to payload, the payload field that holds the key, and a title and a
description. The relay's mapping, the AsyncAPI publishers, the JSON Schemas, the topics
created at start and the README's topic table are all derived from these declarations
(``services.processes.published`` gathers them, ``services.processes.documents`` writes
the documents).

The structured-mode JSON itself is written by ``services.kafka.fast_cloudevents``, held to
the CloudEvents SDK's. The CloudEvent ``id`` is derived from the event's place in its
aggregate, so a re-published event carries the same ``id`` and consumers de-duplicate on it.
"""

import builtins
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any, Literal
from uuid import UUID

import orjson
from cloudevents.core.bindings.kafka import KafkaMessage
from pydantic import BaseModel, Field, create_model

from contracts.envelope import CloudEventEnvelope
from services.kafka.fast_cloudevents import PayloadWriter, cloudevent_json
from services.observing.tracing import traceparent_of

EVENT_ID_NAMESPACE = UUID("4e3f7c1a-9b2d-5d8e-8f60-2a7b1c9d0e55")
NAMESPACE_BYTES = EVENT_ID_NAMESPACE.bytes
NAMESPACED = hashlib.sha1(NAMESPACE_BYTES)  # SHA-1 begun on the namespace, as uuid5 begins it
# A hex digit with its two high bits set to RFC 9562's variant, 10: 8, 9, a or b.
VARIANT_DIGIT = {f"{d:x}": f"{0x8 | (d & 0x3):x}" for d in range(16)}
# Structured content mode: the whole CloudEvent is the value, this is its Kafka header.
CONTENT_TYPE = "application/cloudevents+json"


@dataclass(frozen=True)
class Publication:
    """One public event, declared once.

    ``key`` names the payload field (by its wire alias) that holds the aggregate id: it is
    the Kafka key, the CloudEvent ``subject`` and ``partitionkey``, so a consumer sees one
    aggregate's events in order.
    """

    event: builtins.type
    topic: str
    payload: builtins.type[BaseModel]
    to_contract: Callable[[Any], BaseModel]
    key: str
    title: str
    description: str
    # Optional: the payload's JSON written without building the contract (see PayloadWriter).
    payload_writer: PayloadWriter | None = None

    @cached_property
    def type(self) -> str:
        """The CloudEvent type: the topic's namespace and the title, so it is never typed
        twice (``evaluation.feedback.v1.FeedbackRecorded``)."""
        return f"{self.topic.rsplit('.', 1)[0]}.{self.title}"

    def envelope(self) -> builtins.type[CloudEventEnvelope]:
        """The whole Kafka value as a model: the CloudEvent whose ``data`` is the payload.
        Derived, so the type string and the payload are never written twice."""
        model: builtins.type[CloudEventEnvelope] = create_model(
            f"{self.title}Message",
            __base__=CloudEventEnvelope,
            __doc__=f"Published on ``{self.topic}``; key = {self.key}. {self.description}",
            type=(Literal[self.type], ...),  # type: ignore[arg-type]  # a type made at run time
            subject=(str, Field(description=f"The {self.key}.")),
            time=(datetime, ...),
            tenantid=(str, ...),
            data=(self.payload, ...),
        )
        return model


def cloudevent_id(originator_id: UUID | str, originator_version: int) -> str:
    """``str(uuid5(EVENT_ID_NAMESPACE, f"{originator_id}/{originator_version}"))``, written
    out: the same SHA-1 name-based UUID (RFC 9562, version 5) without building a ``UUID``, as
    the relay makes one for every event it publishes. The namespace is hashed once
    (``NAMESPACED``, copied per id); the version and variant bits are set in the text: the
    version digit is ``5``, the variant digit keeps its two low bits over ``10``
    (``VARIANT_DIGIT``). A property test holds it to ``uuid5``."""
    hashed = NAMESPACED.copy()
    hashed.update(f"{originator_id}/{originator_version}".encode())
    h = hashed.hexdigest()
    return f"{h[:8]}-{h[8:12]}-5{h[13:16]}-{VARIANT_DIGIT[h[16]]}{h[17:20]}-{h[20:32]}"


def key_of(originator_id: UUID | str) -> bytes:
    """The Kafka key of an aggregate's events: its id as text, in UTF-8. orjson writes a
    ``UUID`` in the text ``str`` gives (RFC 9562's hyphenated lower-case hex), in C, for a
    fraction of the cost of ``str(uuid).encode()``; a test holds the two together."""
    if type(originator_id) is UUID:
        return orjson.dumps(originator_id)[1:-1]
    return str(originator_id).encode()


def to_message(publication: Publication, event: Any, source: str) -> KafkaMessage:
    """One domain event as a Kafka message: key = aggregate id, value = the CloudEvent."""
    subject = str(event.originator_id)
    return KafkaMessage(
        headers={"content-type": CONTENT_TYPE.encode()},
        key=subject,
        value=structured_cloudevent(publication, event, source, subject),
    )


def structured_cloudevent(publication: Publication, event: Any, source: str, subject: str) -> bytes:
    """The CloudEvent in structured JSON mode, the Kafka message's value."""
    attributes = cloudevent_attributes(publication, event, source, subject)
    return cloudevent_json(attributes, publication.to_contract, publication.payload_writer, event)


def cloudevent_attributes(
    publication: Publication, event: Any, source: str, subject: str
) -> dict[str, Any]:
    """A domain event's CloudEvent attributes, in the order the SDK writes them; the optional
    ``tenantid`` and ``traceparent`` extensions only when present."""
    attributes: dict[str, Any] = {
        "id": cloudevent_id(subject, event.originator_version),  # subject: the id as text
        "source": source,
        "type": publication.type,
        "subject": subject,
        "time": event.timestamp,
        "datacontenttype": "application/json",
        "partitionkey": subject,
    }
    tenant = getattr(event, "tenant_id", None)
    if tenant is not None:
        attributes["tenantid"] = tenant
    if (trace := traceparent_of(event)) is not None:
        attributes["traceparent"] = trace
    return attributes
