"""Supervised background work: a task that crashes is logged with its traceback and started
again after a pause that grows (tenacity's exponential backoff with jitter, capped at 30 s).

Nothing dies quietly: every task is named, its restarts are counted (metric
``feedbackloop_task_restarts``) and ``alive()`` tells /readyz whether it still runs.
"""

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, wait_random_exponential

from services.observing import metrics

log = logging.getLogger(__name__)


@dataclass
class Supervised:
    name: str
    task: asyncio.Task[None]
    restarts: int = 0
    last_error: str | None = None

    @property
    def alive(self) -> bool:
        return not self.task.done()


@dataclass
class Supervisor:
    stop: asyncio.Event
    max_pause: float = 30.0
    tasks: dict[str, Supervised] = field(default_factory=dict)

    def start(self, name: str, work: Callable[[], Awaitable[None]]) -> Supervised:
        """Run ``work()`` until it returns (asked to stop); restart it whenever it raises."""
        supervised = Supervised(name, asyncio.create_task(self._keep(name, work), name=name))
        self.tasks[name] = supervised
        return supervised

    async def _keep(self, name: str, work: Callable[[], Awaitable[None]]) -> None:
        def crashed(state: RetryCallState) -> None:
            error = state.outcome.exception() if state.outcome else None
            supervised = self.tasks[name]
            supervised.restarts += 1
            supervised.last_error = f"{type(error).__name__}: {error}"
            metrics.READER_RESTARTS.labels(name).inc()
            log.error(
                "%s crashed (restart %d in %.1f s)",
                name,
                supervised.restarts,
                state.upcoming_sleep,
                exc_info=error,
            )

        retrying = AsyncRetrying(
            retry=retry_if_exception_type(Exception),  # never CancelledError: that is a stop
            wait=wait_random_exponential(multiplier=0.5, max=self.max_pause),
            before_sleep=crashed,
            sleep=self._sleep,
        )
        async for attempt in retrying:
            with attempt:
                if self.stop.is_set():
                    return
                await work()

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):  # a stop during the pause ends it at once
            await asyncio.wait_for(self.stop.wait(), timeout=seconds)

    async def aclose(self) -> None:
        self.stop.set()
        tasks = [s.task for s in self.tasks.values()]
        _, pending = await asyncio.wait(tasks, timeout=10) if tasks else (set(), set())
        for task in pending:  # stuck in I/O past the stop: cancel it
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
