"""Trace links (D260–D263): the W3C ids' rules at the door, the GenAI attributes kept, the
trace a command carries, and the link the service's own span gets."""

from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import TypeAdapter, ValidationError

from contracts.errors import Refused
from contracts.feedback import RecordFeedback
from contracts.scalars import SpanId, TraceId
from contracts.trace_links import GenAiAttributes, check_trace_links, trace_fields
from services.observing.otel import link_answer
from services.observing.tracing import explicit_traceparent, link_spans, span_linkers

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN = "00f067aa0ba902b7"


def test_a_trace_id_is_32_lowercase_hex_digits_not_all_zeros() -> None:
    assert TypeAdapter(TraceId).validate_python(TRACE) == TRACE
    for bad in ("0" * 32, TRACE.upper(), TRACE[:-1], TRACE + "0", "g" * 32, f" {TRACE[1:]}"):
        with pytest.raises(ValidationError):
            TypeAdapter(TraceId).validate_python(bad)


def test_a_span_id_is_16_lowercase_hex_digits_not_all_zeros() -> None:
    assert TypeAdapter(SpanId).validate_python(SPAN) == SPAN
    for bad in ("0" * 16, SPAN.upper(), SPAN[:-1], TRACE, "", "00f067aa0ba902b\x00"):
        with pytest.raises(ValidationError):
            TypeAdapter(SpanId).validate_python(bad)


def test_only_the_few_genai_attributes_are_kept_each_one_bounded_line() -> None:
    given = {"gen_ai.request.model": "gpt-4o", "gen_ai.response.id": "chatcmpl-1"}
    assert GenAiAttributes.model_validate(given).as_attributes() == given
    for bad in (
        {"gen_ai.usage.input_tokens": "5"},  # not one of those kept
        {"gen_ai.request.model": "m" * 201},
        {"gen_ai.request.model": "two\nlines"},
        {"gen_ai.request.model": " "},
        {"gen_ai.request.model": 4},
    ):
        with pytest.raises(ValidationError):
            GenAiAttributes.model_validate(bad)


def test_a_span_id_without_its_trace_id_is_refused_naming_the_trace_id() -> None:
    check_trace_links(TRACE, SPAN)
    check_trace_links(TRACE, None)
    check_trace_links(None, None)
    with pytest.raises(Refused) as refused:
        check_trace_links(None, SPAN)
    assert refused.value.details == {"field": "traceId"}


def test_an_event_keeps_the_ids_and_the_attributes_as_a_plain_dict() -> None:
    attributes = GenAiAttributes.model_validate({"gen_ai.provider.name": "openai"})
    assert trace_fields(TRACE, SPAN, attributes) == {
        "trace_id": TRACE,
        "span_id": SPAN,
        "gen_ai": {"gen_ai.provider.name": "openai"},
    }
    empty = GenAiAttributes()
    assert trace_fields(None, None, empty) == {"trace_id": None, "span_id": None, "gen_ai": None}


def feedback(**trace: Any) -> RecordFeedback:
    return RecordFeedback.model_validate(
        {
            "projectId": "p",
            "subjectKind": "run",
            "subjectRef": "r",
            "kind": "comment",
            "commentRef": "c",
            **trace,
        }
    )


CARRIED = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
IN_TRACE = f"00-{TRACE}-b7ad6b7169203331-00"


@pytest.mark.parametrize(
    ("trace", "carried", "kept"),
    [
        ({}, CARRIED, CARRIED),  # no body ids: the carrier's trace
        ({}, None, None),
        ({"traceId": TRACE, "spanId": SPAN}, CARRIED, f"00-{TRACE}-{SPAN}-01"),  # the body wins
        ({"traceId": TRACE, "spanId": SPAN}, IN_TRACE, f"00-{TRACE}-{SPAN}-00"),  # its flags
        ({"traceId": TRACE, "spanId": SPAN}, None, f"00-{TRACE}-{SPAN}-01"),
        ({"traceId": TRACE}, CARRIED, CARRIED),  # no span id: no traceparent of the body's
        ({"traceId": TRACE}, None, None),
    ],
)
def test_the_trace_a_command_carries_prefers_the_ids_its_body_names(
    trace: dict[str, str], carried: str | None, kept: str | None
) -> None:
    assert explicit_traceparent(feedback(**trace), carried) == kept


def test_the_current_span_links_to_the_answer_and_carries_its_attributes() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    gen_ai = {"gen_ai.request.model": "gpt-4o"}
    span_linkers.append(link_answer)
    try:
        with provider.get_tracer("test").start_as_current_span("POST /factory/feedback"):
            link_spans([feedback(traceId=TRACE, spanId=SPAN, genAi=gen_ai), feedback()])
    finally:
        span_linkers.remove(link_answer)
    (span,) = exporter.get_finished_spans()
    (link,) = span.links
    assert (f"{link.context.trace_id:032x}", f"{link.context.span_id:016x}") == (TRACE, SPAN)
    assert dict(span.attributes or {}) == {"feedbackloop.answer.trace_id": TRACE, **gen_ai}
