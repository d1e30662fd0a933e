"""The CloudEvents 1.0 envelopes (structured JSON mode) that carry our contracts on Kafka.

These models document and pin the wire shape; the relay writes envelopes and the inbound
consumers read them (``services.kafka.publication``, ``services.kafka.inbound.parsing``), both held
to
what the CloudEvents SDK writes and reads. The envelope of each published event
(``<Title>Message``) is derived from its declaration
(``services.kafka.publication.Publication.envelope``), not written here.
"""

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints

from contracts.agent_changes import AgentChanged
from contracts.feedback import Contract, RecordFeedback
from contracts.neighbours import (
    ArtifactValidated,
    DriftDetected,
    EvaluationCompleted,
    RunCompleted,
    SkillCandidateProposed,
)
from contracts.roles import Role
from contracts.runtime_facts import OwnerOutcomeRecorded, TaskClosed
from contracts.scalars import Instant, NoNul, NotBlank

# Bounds of every attribute, checked before anything is stored: a 600 KB tenant id must be
# refused at the door, not found too big by the relay later. A blank one (spaces, a zero-width
# space) names nothing: an ``id`` of blanks would be every blank event's identity.
MAX_ATTRIBUTE_LENGTH = 256
MAX_MESSAGE_BYTES = 512 * 1024  # the whole Kafka value of a message we consume
Attribute = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_ATTRIBUTE_LENGTH), NoNul, NotBlank
]


class CloudEventEnvelope(Contract):
    """CloudEvents 1.0 attributes. Extension attributes are allowed, as the specification
    says (a neighbour's ``traceparent`` or its own); ``data`` stays strict in each message."""

    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)

    specversion: Literal["1.0"]
    id: Attribute = Field(description="Unique per source; consumers de-duplicate on it.")
    source: Attribute
    type: Attribute
    subject: Attribute | None = None
    time: Instant | None = None
    datacontenttype: Literal["application/json"] | None = None
    partitionkey: Attribute | None = Field(default=None, description="The Kafka message key.")
    # Not an Attribute: a malformed trace is ignored, never a refusal
    # (services/observing/tracing.py).
    traceparent: str | None = Field(
        default=None,
        description="W3C trace context (the CloudEvents distributed tracing extension): the "
        "trace of the request or command that caused this message. Ignored unless well formed.",
    )


class InboundEnvelope(CloudEventEnvelope):
    """Any CloudEvent we consume: ``tenantid`` says whose it is. ``actor`` (who acted) is
    required of our own commands; a neighbour's event may leave it out, its ``source`` then
    stands for it."""

    tenantid: Attribute
    actor: Attribute | None = None
    role: Role | None = Field(
        default=None,
        description="The role (SPEC C52) the sender acts in, one its `source` is configured "
        "to hold; left out, it acts in every role its source holds.",
    )


class CommandEnvelope(InboundEnvelope):
    """A command from another service. ``tenantid`` and ``actor`` say for whom and by whom;
    the broker's ACL decides who may write to a command topic."""

    actor: Attribute


class NeighbourEnvelope(InboundEnvelope):
    """Another service's event (``contracts.neighbours``), read tolerantly."""


class RecordFeedbackMessage(CommandEnvelope):
    """A command on ``evaluation.feedback.v1.record-feedback``.

    ``tenantid`` and ``actor`` say for whom and by whom; the broker's ACL decides who may
    write to this topic. ``source`` + ``id`` is the command's identity: the same pair is
    applied once, however often it is sent.
    """

    type: Literal["evaluation.feedback.v1.RecordFeedback"]
    data: RecordFeedback


class RunCompletedMessage(NeighbourEnvelope):
    """``factory.runs.v1.run-completed``, from run control."""

    type: Literal["factory.runs.v1.RunCompleted"]
    data: RunCompleted


class ArtifactValidatedMessage(NeighbourEnvelope):
    """``factory.artifacts.v1.artifact-validated``, from the artifact service."""

    type: Literal["factory.artifacts.v1.ArtifactValidated"]
    data: ArtifactValidated


class EvaluationCompletedMessage(NeighbourEnvelope):
    """``factory.quality.v1.evaluation-completed``, from quality scoring."""

    type: Literal["factory.quality.v1.EvaluationCompleted"]
    data: EvaluationCompleted


class DriftDetectedMessage(NeighbourEnvelope):
    """``factory.quality.v1.drift-detected``, from quality scoring."""

    type: Literal["factory.quality.v1.DriftDetected"]
    data: DriftDetected


class SkillCandidateProposedMessage(NeighbourEnvelope):
    """``factory.memory.v1.skill-candidate-proposed``, from memory promotion."""

    type: Literal["factory.memory.v1.SkillCandidateProposed"]
    data: SkillCandidateProposed


class OwnerOutcomeRecordedMessage(NeighbourEnvelope):
    """``factory.agents.v1.owner-outcome-recorded``, from the agents' runtime."""

    type: Literal["factory.agents.v1.OwnerOutcomeRecorded"]
    data: OwnerOutcomeRecorded


class TaskClosedMessage(NeighbourEnvelope):
    """``factory.tasks.v1.task-closed``, from the task system."""

    type: Literal["factory.tasks.v1.TaskClosed"]
    data: TaskClosed


class AgentChangedMessage(NeighbourEnvelope):
    """``factory.registry.v1.agent-changed``, from the agent registry (decisions D240)."""

    type: Literal["factory.registry.v1.AgentChanged"]
    data: AgentChanged


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
