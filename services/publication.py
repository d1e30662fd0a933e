"""Domain events as integration events: CloudEvents 1.0, structured JSON mode, on Kafka.

The envelope is built by the CloudEvents SDK; only the mapping is ours. The CloudEvent ``id``
is derived from the event's place in its aggregate, so a re-published event carries the same
``id`` and consumers de-duplicate on it.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from uuid import UUID, uuid5

from cloudevents.core.bindings.kafka import KafkaMessage, to_structured_event
from cloudevents.core.v1.event import CloudEvent
from pydantic import BaseModel

EVENT_ID_NAMESPACE = UUID("4e3f7c1a-9b2d-5d8e-8f60-2a7b1c9d0e55")


@dataclass(frozen=True)
class Publication:
    topic: str
    type: str
    to_contract: Callable[[Any], BaseModel]


def cloudevent_id(originator_id: UUID, originator_version: int) -> str:
    return str(uuid5(EVENT_ID_NAMESPACE, f"{originator_id}/{originator_version}"))


def to_message(publication: Publication, event: Any, source: str) -> KafkaMessage:
    """One domain event as a Kafka message: key = aggregate id, value = the CloudEvent."""
    contract = publication.to_contract(event)
    subject = str(event.originator_id)
    attributes: dict[str, Any] = {
        "id": cloudevent_id(event.originator_id, event.originator_version),
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
    return to_structured_event(
        CloudEvent(attributes, contract.model_dump(mode="json", by_alias=True))
    )
