"""The agent protocol: how Feedback Loop asks an agent under test for a reply.

An agent speaks it over HTTP: ``POST {base}/v1/reply`` with an ``AgentRequest`` answers an
``AgentReply``. An agent that cannot serve the requested model answers 422 with
``{"error": "model-configuration", "message": …}``: the reply is a non-answer, never an
invention (SPEC W70).
"""

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from contracts.feedback import Contract
from contracts.reports import ToolCallRecord
from contracts.scalars import Ref
from contracts.trace_links import GenAiField, SpanIdField, TraceIdField

Effort = Literal["low", "medium", "high"]


class AgentRequest(Contract):
    prompt: Annotated[str, StringConstraints(min_length=1, max_length=16_000)]
    context: list[Ref] = Field(default_factory=list, description="Context paths, attachments.")
    requested_model: Ref | None = Field(
        default=None, alias="requestedModel", description="None: the agent chooses."
    )
    effort: Effort = "medium"
    thread_ref: Ref = Field(alias="threadRef", description="Where this conversation lives.")
    submitter: Ref = Field(description="The person the conversation runs as (SPEC W56).")


class AgentReply(Contract):
    text: str
    tool_calls: list[ToolCallRecord] = Field(default_factory=list, alias="toolCalls")
    model_name: Ref = Field(alias="modelName", description="The model that actually answered.")
    requested_model_name: Ref | None = Field(default=None, alias="requestedModelName")
    harness: Ref | None = None
    # Where the reply sits in the agent's own traces (D263): linked from the console.
    trace_id: TraceIdField = None
    span_id: SpanIdField = None
    gen_ai: GenAiField = None


class AgentError(Contract):
    error: Literal["model-configuration", "unavailable"]
    message: str
