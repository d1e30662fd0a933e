"""Domain events as integration events: CloudEvents 1.0, structured JSON mode, on Kafka.

Each context declares its public events once, as ``Publication`` values in its
``published.py``: the event class, the topic, the CloudEvent type, the payload model, the
mapping from event to payload, the payload field that holds the key, and a title and a
description. The relay's mapping, the AsyncAPI publishers, the JSON Schemas, the topics
created at start and the README's topic table are all derived from these declarations
(``services.processes.published`` gathers them, ``services.processes.documents`` writes
the documents).

The structured-mode JSON is written here, in one pass of orjson with the payload serialized by
pydantic as a fragment of it: building a ``CloudEvent`` of the SDK and encoding it through
``to_structured_event`` cost the relay ~60-90 µs an event (issue 12, figure 5). The SDK stays
the reference: the tests read what we write back with it and compare it to what the SDK itself
writes (the same attributes and the same JSON values; only the spacing differs, and non-ASCII
characters travel as UTF-8 instead of ``\\u`` escapes). The CloudEvent ``id`` is derived from
the event's place in its aggregate, so a re-published event carries the same ``id`` and
consumers de-duplicate on it.
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
    payload_writer: "PayloadWriter | None" = None

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


@dataclass(frozen=True)
class PayloadWriter:
    """A payload's JSON written without building its contract: ``write`` gives byte for byte
    what ``mapping(event).model_dump_json(by_alias=True)`` gives, or None where that is not
    certain (then the contract is built and validated as ever, and a refusal parks the
    event). It vouches for that mapping only: a publication with another ``to_contract``
    builds its contract. Issue 12, figure 5: building and validating the contract was about
    a sixth of the relay's CPU an event."""

    mapping: Callable[[Any], BaseModel]
    write: Callable[[Any], bytes | None]


def cloudevent_id(originator_id: UUID | str, originator_version: int) -> str:
    """``str(uuid5(EVENT_ID_NAMESPACE, f"{originator_id}/{originator_version}"))``, written
    out: the same SHA-1 name-based UUID (RFC 9562, version 5) without building a ``UUID``,
    which cost the relay about 13 µs an event of the 87 it spent (issue 12, figure 5). The
    namespace is hashed once (``NAMESPACED``, copied per id); the version and variant bits are
    set in the text: the version digit is ``5``, the variant digit keeps its two low bits over
    ``10`` (``VARIANT_DIGIT``). The tests hold it to ``uuid5``."""
    hashed = NAMESPACED.copy()
    hashed.update(f"{originator_id}/{originator_version}".encode())
    h = hashed.hexdigest()
    return f"{h[:8]}-{h[8:12]}-5{h[13:16]}-{VARIANT_DIGIT[h[16]]}{h[17:20]}-{h[20:32]}"


def key_of(originator_id: UUID | str) -> bytes:
    """The Kafka key of an aggregate's events: its id as text, in UTF-8. orjson writes a
    ``UUID`` in the text ``str`` gives (RFC 9562's hyphenated lower-case hex), in C: a
    quarter of the cost of ``str(uuid).encode()`` (issue 12, figure 5)."""
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
    """The CloudEvent in structured JSON mode: its attributes as the SDK wrote them, ``time``
    in RFC 3339 (``Z`` for UTC, as the SDK writes it), then ``specversion`` and the payload as
    ``data`` (its wire aliases, JSON values as ``model_dump(mode="json")``)."""
    attributes = cloudevent_attributes(publication, event, source, subject)
    attributes["specversion"] = "1.0"
    attributes["data"] = orjson.Fragment(payload_json(publication, event))
    return orjson.dumps(attributes, option=orjson.OPT_UTC_Z)


def payload_json(publication: Publication, event: Any) -> bytes | str:
    """The payload's JSON: the publication's own writer where it vouches for the bytes, else
    the contract built, validated (a refusal parks the event) and dumped by pydantic."""
    writer = publication.payload_writer
    if (
        writer is not None
        and writer.mapping is publication.to_contract
        and (written := writer.write(event)) is not None
    ):
        return written
    return publication.to_contract(event).model_dump_json(by_alias=True)


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
