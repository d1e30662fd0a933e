"""What the parts of the benchmarks share: the RecordFeedback every part sends (``body``, in
the tenant ``TENANT``), the feedback context's bus as a process of the service builds it, its
callers timed at once, and the statement that reads the head of the log."""

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from services.bus.command_bus import CommandBus
from services.declaration import registry
from services.feedback.context import FEEDBACK
from services.store.event_store import EVENTS_TABLE, EventStore
from services.store.fast_loop_store import LoopStore

TENANT = "bench"


def body(n: int) -> dict[str, Any]:
    """The n-th RecordFeedback every part of the benchmarks sends."""
    ref, rating = f"run-{n}", 1 + n % 5
    return {"projectId": "bench", "subjectKind": "run", "subjectRef": ref, "kind": "rating"} | {
        "rating": rating
    }


async def feedback_bus(store: EventStore, url: str) -> tuple[CommandBus, LoopStore]:
    """The feedback context's bus as a process of the service builds it (``Runtime.open``),
    and the loop store it writes with; the caller closes both."""
    loop_store = await LoopStore.open(url, store)
    commands = registry((FEEDBACK,))
    bus = CommandBus(
        store,
        commands.handlers,
        creates=commands.creates,
        loop_store=loop_store,
        alone=commands.alone,
    )
    return bus, loop_store


async def callers(
    bus: CommandBus, loop_store: LoopStore, call: Callable[[], Awaitable[None]], clients: int
) -> float:
    """Seconds for ``clients`` callers running ``call`` at once; the bus and its loop store
    closed after."""
    t0 = time.perf_counter()
    try:
        await asyncio.gather(*(call() for _ in range(clients)))
    finally:
        await bus.aclose()
        await loop_store.close()
    return time.perf_counter() - t0


HEAD = f"SELECT coalesce(max(notification_id), 0) FROM {EVENTS_TABLE}"
