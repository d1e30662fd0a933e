"""How a long-running process starts: its metrics port first (a wait for PostgreSQL shows
there), then its runtime, waiting for PostgreSQL as long as it takes; and, for an API worker,
a stop signal honoured while it waits."""

import asyncio
import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

from services.processes.bootstrap import Runtime
from services.processes.metrics_port import serve_metrics
from services.processes.roles import Role
from services.processes.settings import Settings


async def start(settings: Settings, role: Role, *, workers: int = 1) -> Runtime:
    """A long-running process's start: its metrics port first (a wait shows there), then
    its runtime, waiting for PostgreSQL as long as it takes (services/processes/waiting.py)."""
    served = serve_metrics(settings, role, workers)
    try:
        runtime = await Runtime.open(settings, role, wait=True)
    except BaseException:
        if served is not None:
            served[1]()
        raise
    runtime.metrics_served(served)
    return runtime


@contextlib.contextmanager
def cancelled_on_stop_signal(task: "asyncio.Task[None]") -> Iterator[None]:
    """While an API worker starts, SIGINT or SIGTERM also cancels ``task``: uvicorn's own
    handler only marks the server to exit once it has started, which it never does while it
    waits for PostgreSQL. uvicorn's handlers run as before and are put back afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only
        return
    loop = asyncio.get_running_loop()
    before: dict[int, Any] = {}

    def stop(sig: int, frame: FrameType | None) -> None:
        if callable(before[sig]):
            before[sig](sig, frame)
        loop.call_soon_threadsafe(task.cancel)

    for each in (signal.SIGINT, signal.SIGTERM):
        before[each] = signal.signal(each, stop)
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)
