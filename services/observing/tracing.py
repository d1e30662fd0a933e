"""W3C trace context carried with the work: HTTP (or a Kafka command's CloudEvents
``traceparent`` extension) → the events' metadata in the store → every message the relay
publishes, so that one trace spans HTTP → store → Kafka → neighbour.

Only a well-formed ``traceparent`` (``00-<32 hex>-<16 hex>-<2 hex>``, not all zeros) is kept;
anything else is ignored, never an error: tracing must not refuse work.
"""

import re
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

TRACEPARENT_PATTERN = re.compile(r"^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$")

# The trace of the request or message being handled, read by the command bus.
current_traceparent: ContextVar[str | None] = ContextVar("traceparent", default=None)


def valid_traceparent(value: object) -> str | None:
    if isinstance(value, str) and TRACEPARENT_PATTERN.match(value.strip().lower()):
        return value.strip().lower()
    return None


def explicit_traceparent(command: Any, carried: str | None) -> str | None:
    """The command's trace: the ``traceId``/``spanId`` its body names (feedback, reports, eval
    runs), preferred to the one its carrier brought (the HTTP header, the CloudEvent's
    ``traceparent``), so what is published about the answer joins the answer's trace (D261).
    A trace id without a span id makes no ``traceparent``: the carrier's is kept, and taken
    up only when it lies in that trace (its parent id then is the answer's side of it)."""
    trace_id = getattr(command, "trace_id", None)
    if trace_id is None:
        return carried
    span_id = getattr(command, "span_id", None)
    if span_id is None:
        return carried
    same_trace = carried is not None and carried[3:35] == trace_id
    flags = carried[-2:] if carried is not None and same_trace else "01"
    return f"00-{trace_id}-{span_id}-{flags}"


# What links the span being handled to a command's trace: set by ``services.observing.otel``
# when this process exports traces, empty otherwise (nothing of OpenTelemetry is loaded).
SpanLinker = Callable[[str, str | None, dict[str, str]], None]
span_linkers: list[SpanLinker] = []


def link_spans(commands: Sequence[Any]) -> None:
    """Give the current span (the request's or the message's) a link to the trace each
    command names, with the GenAI attributes it brought (D263)."""
    for command in commands:
        trace_id = getattr(command, "trace_id", None)
        if trace_id is None:
            continue
        gen_ai = getattr(command, "gen_ai", None)
        attributes = gen_ai.as_attributes() if gen_ai is not None else {}
        for linker in span_linkers:
            linker(trace_id, getattr(command, "span_id", None), attributes)


def stamp(event: Any, traceparent: str | None) -> None:
    """Keep the trace in the event's metadata (its stored state). The library hands an
    event method only the arguments it names, so an extra attribute never reaches a
    decision, and old events without one still load."""
    if traceparent is not None:
        object.__setattr__(event, "traceparent", traceparent)


def traceparent_of(event: Any) -> str | None:
    return valid_traceparent(getattr(event, "traceparent", None))


class TraceContext:
    """ASGI middleware: the request's ``traceparent`` header, if valid, for the bus to keep."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        value = None
        for name, raw in scope.get("headers", ()):
            if name == b"traceparent":
                value = valid_traceparent(raw.decode("latin-1"))
                break
        token = current_traceparent.set(value)
        try:
            await self.app(scope, receive, send)
        finally:
            current_traceparent.reset(token)
