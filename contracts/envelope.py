"""The CloudEvents 1.0 envelopes (structured JSON mode) that carry our contracts on Kafka.

These models document and pin the wire shape; building and reading envelopes is the
CloudEvents SDK's job. The envelope of each published event (``<Title>Message``) is derived
from its declaration (``services.publication.Publication.envelope``), not written here.
"""

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from contracts.feedback import Contract, RecordFeedback


class CloudEventEnvelope(Contract):
    specversion: Literal["1.0"]
    id: str = Field(description="Unique per source; consumers de-duplicate on it.")
    source: str
    type: str
    subject: str | None = None
    time: datetime | None = None
    datacontenttype: Literal["application/json"] | None = None
    partitionkey: str | None = Field(default=None, description="The Kafka message key.")


class RecordFeedbackMessage(CloudEventEnvelope):
    """A command on ``evaluation.feedback.v1.record-feedback``.

    ``tenantid`` and ``actor`` say for whom and by whom; the broker's ACL decides who may
    write to this topic.
    """

    type: Literal["evaluation.feedback.v1.RecordFeedback"]
    tenantid: str
    actor: str
    data: RecordFeedback


def self_contained_schema(model: type[Contract]) -> dict[str, Any]:
    """The model's JSON Schema with every ``$ref`` inlined (our contracts are not recursive),
    for documents that cannot carry ``$defs`` of their own."""
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return inline(definitions[node["$ref"].rsplit("/", 1)[-1]])
            return {key: inline(value) for key, value in node.items()}
        if isinstance(node, list):
            return [inline(item) for item in node]
        return node

    inlined: dict[str, Any] = inline(schema)
    return inlined
