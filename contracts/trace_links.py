"""Trace links: where the work a command is about sits in the caller's tracing system.

Feedback, reports and eval runs may name the trace (and the span) of the agent's answer they
are about, in W3C Trace Context's ids, and a few OpenTelemetry GenAI attributes a neighbour
sends with it. They are kept with the event, shown in the read models' answers, linked from
the console by the tenant's URL template, and carried as the command's ``traceparent``
(preferred to the HTTP header or the CloudEvent attribute) so one trace shows the answer and
what was said about it (docs/tracing.md, D260–D263).
"""

from typing import Annotated, Any
from urllib.parse import quote, urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
)

from contracts.errors import Refused
from contracts.scalars import NoNul, NotBlank, SpanId, TraceId

# A GenAI attribute's value: a model's name or a response's id, one line, bounded (D262).
AttributeText = Annotated[
    str, StringConstraints(min_length=1, max_length=200, pattern=r"^[^\r\n]*$"), NoNul, NotBlank
]


class GenAiAttributes(BaseModel):
    """The few OpenTelemetry GenAI semantic-convention attributes kept (D262), under their own
    dotted names; any other key is refused, naming it, as every unknown field of ours is."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    provider_name: AttributeText | None = Field(default=None, alias="gen_ai.provider.name")
    request_model: AttributeText | None = Field(default=None, alias="gen_ai.request.model")
    response_model: AttributeText | None = Field(default=None, alias="gen_ai.response.model")
    response_id: AttributeText | None = Field(default=None, alias="gen_ai.response.id")

    def as_attributes(self) -> dict[str, str]:
        """The attributes given, by their OpenTelemetry names (what events and spans keep)."""
        return self.model_dump(by_alias=True, exclude_none=True)


TraceIdField = Annotated[
    TraceId | None,
    Field(
        alias="traceId",
        description="The W3C trace id (32 lowercase hex, not all zeros) of the agent's answer "
        "this is about; linked from the console and carried as this command's trace.",
    ),
]
SpanIdField = Annotated[
    SpanId | None,
    Field(
        alias="spanId",
        description="The W3C span id (16 lowercase hex, not all zeros) of the answer's span; "
        "only with `traceId`.",
    ),
]
GenAiField = Annotated[
    GenAiAttributes | None,
    Field(
        alias="genAi",
        description="OpenTelemetry GenAI attributes of the answer: `gen_ai.provider.name`, "
        "`gen_ai.request.model`, `gen_ai.response.model`, `gen_ai.response.id`.",
    ),
]


def trace_fields(trace_id: str | None, span_id: str | None, gen_ai: object) -> dict[str, object]:
    """What an event keeps of a command's trace links (D261): the ids, and the GenAI
    attributes as a plain dict, or None for each one absent."""
    attributes = gen_ai.as_attributes() if isinstance(gen_ai, GenAiAttributes) else None
    return {"trace_id": trace_id, "span_id": span_id, "gen_ai": attributes or None}


LINK_ADAPTERS: dict[str, TypeAdapter[Any]] = {
    "traceId": TypeAdapter(TraceId),
    "spanId": TypeAdapter(SpanId),
    "genAi": TypeAdapter(GenAiAttributes),
}


def neighbours_links(payload: Any) -> Any:
    """A neighbour's message (an agent's reply) with its trace links kept only where they hold:
    one that breaks the rules is dropped, never a reason to refuse the reply (D263), for a
    trace id is a pointer to look at, not part of the answer being scored."""
    if not isinstance(payload, dict):
        return payload
    kept = dict(payload)
    for name, adapter in LINK_ADAPTERS.items():
        if name in kept:
            try:
                adapter.validate_python(kept[name])
            except ValidationError:
                del kept[name]
    if "traceId" not in kept:
        kept.pop("spanId", None)
    return kept


def check_trace_links(trace_id: str | None, span_id: str | None) -> None:
    """A span id says where in a trace: without the trace it names nothing (D261)."""
    if span_id is not None and trace_id is None:
        raise Refused("a span id needs the trace id it belongs to", field="traceId")


# ---- The console's links (D265) ------------------------------------------------------------

PLACEHOLDERS = ("{traceId}", "{spanId}")


def trace_url_template(value: str) -> str:
    """A tenant's tracing UI as a URL template: absolute http(s) with a host, naming
    ``{traceId}`` (and ``{spanId}`` if the UI takes it), no other brace (D265). Checked when
    the service starts, so a typo is refused by name rather than rendered into every page."""
    parts = urlsplit(value)
    if parts.scheme not in ("https", "http") or not parts.netloc:
        raise ValueError("a trace link template is an absolute http(s) URL with a host")
    if "{traceId}" not in value:
        raise ValueError("a trace link template names {traceId}")
    rest = value
    for placeholder in PLACEHOLDERS:
        rest = rest.replace(placeholder, "")
    if "{" in rest or "}" in rest or any(char.isspace() for char in value):
        raise ValueError("a trace link template holds only {traceId} and {spanId}, no spaces")
    return value


TraceUrlTemplate = Annotated[str, AfterValidator(trace_url_template)]


def trace_url(template: str, trace_id: str, span_id: str | None) -> str:
    """The tracing UI's page of a trace (and span): the ids are W3C hex, quoted all the same,
    so nothing but the ids enters the URL (D265)."""
    return template.replace("{traceId}", quote(trace_id, safe="")).replace(
        "{spanId}", quote(span_id or "", safe="")
    )
