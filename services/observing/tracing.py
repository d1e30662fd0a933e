"""W3C trace context carried with the work: HTTP (or a Kafka command's CloudEvents
``traceparent`` extension) → the events' metadata in the store → every message the relay
publishes, so that one trace spans HTTP → store → Kafka → neighbour.

Only a well-formed ``traceparent`` (``00-<32 hex>-<16 hex>-<2 hex>``, not all zeros) is kept;
anything else is ignored, never an error: tracing must not refuse work.
"""

import re
from contextvars import ContextVar
from typing import Any

TRACEPARENT_PATTERN = re.compile(r"^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$")

# The trace of the request or message being handled, read by the command bus.
current_traceparent: ContextVar[str | None] = ContextVar("traceparent", default=None)


def valid_traceparent(value: object) -> str | None:
    if isinstance(value, str) and TRACEPARENT_PATTERN.match(value.strip().lower()):
        return value.strip().lower()
    return None


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
