"""OpenTelemetry traces, only when asked for.

With ``OTEL_EXPORTER_OTLP_ENDPOINT`` set, ``configure(app)`` sets up a tracer provider that
exports over OTLP/HTTP (the exporter reads the standard ``OTEL_*`` variables itself: endpoint,
headers, service name via ``OTEL_SERVICE_NAME``) and instruments FastAPI, asyncpg and aiokafka.
Without it nothing of OpenTelemetry is imported or configured, so it costs nothing. W3C
``traceparent`` propagation is OpenTelemetry's default.
"""

import logging
import os
from collections.abc import Callable

from fastapi import FastAPI

from services.observing import tracing

log = logging.getLogger(__name__)

ENDPOINT = "OTEL_EXPORTER_OTLP_ENDPOINT"


def configure(app: FastAPI | None = None) -> Callable[[], None] | None:
    """Trace this process if an OTLP endpoint is configured. Answers a function that undoes
    it (uninstruments and flushes the last spans) for the process's shutdown, or None when
    tracing is off. ``app`` is None in processes without HTTP (relay, inbound, projector)."""
    if not os.environ.get(ENDPOINT):
        return None
    # Imported here: a process without an endpoint never loads OpenTelemetry.
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.aiokafka import AIOKafkaInstrumentor
    from opentelemetry.instrumentation.asyncpg import AsyncPGInstrumentor
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create(
        {"service.name": os.environ.get("OTEL_SERVICE_NAME", "feedbackloop")}
    )
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    AsyncPGInstrumentor().instrument(tracer_provider=provider)  # type: ignore[no-untyped-call]
    AIOKafkaInstrumentor().instrument(tracer_provider=provider)
    if app is not None:
        FastAPIInstrumentor.instrument_app(app, tracer_provider=provider)
    tracing.span_linkers.append(link_answer)
    log.info("telemetry: exporting traces to %s", os.environ[ENDPOINT])

    def undo() -> None:
        tracing.span_linkers.remove(link_answer)
        if app is not None:
            FastAPIInstrumentor.uninstrument_app(app)
        AIOKafkaInstrumentor().uninstrument()
        AsyncPGInstrumentor().uninstrument()  # type: ignore[no-untyped-call]
        provider.shutdown()

    return undo


def link_answer(trace_id: str, span_id: str | None, attributes: dict[str, str]) -> None:
    """The current span (the request's or the message's) links to the answer's span when the
    command names one, and carries the answer's trace id and GenAI attributes (D263): a link,
    not a parent, for the carrier's ``traceparent`` is already the span's parent."""
    from opentelemetry import trace

    span = trace.get_current_span()
    if not span.is_recording():
        return
    if span_id is not None:
        answer = trace.SpanContext(
            int(trace_id, 16), int(span_id, 16), is_remote=True, trace_flags=trace.TraceFlags(1)
        )
        span.add_link(answer, {"feedbackloop.link": "answer"})
    span.set_attributes({"feedbackloop.answer.trace_id": trace_id, **attributes})
