"""A process waits for PostgreSQL at start instead of exiting: down, restarting, or out of
connections ("too many clients") are conditions that pass, and an orchestrator that starts
every process at once must not have to start them in order.

While it waits it says so: a warning in its log at each attempt (what, where, why, the next
pause) and the gauge ``feedbackloop_start_waiting{dependency}`` on its metrics port, which
is served before the wait: 1 until connected. The pauses grow with jitter up to 30 s (tenacity).
"""

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar
from urllib.parse import urlsplit

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, wait_random_exponential

from services.followers.transient import postgresql_away
from services.observing import metrics

log = logging.getLogger("feedbackloop")
T = TypeVar("T")


def where(database_url: str) -> str:
    """The server's address without the credentials, for the log."""
    url = urlsplit(database_url)
    return f"{url.hostname or 'localhost'}:{url.port or 5432}{url.path}"


async def until_reachable(
    database_url: str, connect: Callable[[], Awaitable[T]], *, max_pause: float = 30.0
) -> T:
    """``connect()`` until it succeeds; any failure but PostgreSQL's absence is raised."""
    # 1 from the first attempt until one succeeds: 0 on a metrics port, served before this
    # wait, then says the process is connected, not only that it has not failed yet.
    waiting = metrics.START_WAITING.labels("postgresql")
    waiting.set(1)

    def say(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        log.warning(
            "waiting for PostgreSQL at %s: %s: %s (attempt %d; next in %.1f s)",
            where(database_url),
            type(error).__name__,
            str(error).strip().splitlines()[0] if str(error).strip() else "",
            state.attempt_number,
            state.upcoming_sleep,
        )

    retrying = AsyncRetrying(
        retry=retry_if_exception(postgresql_away),
        wait=wait_random_exponential(multiplier=0.5, max=max_pause),
        before_sleep=say,
        reraise=True,
    )
    async for attempt in retrying:
        with attempt:
            result = await connect()
    waiting.set(0)
    if retrying.statistics.get("attempt_number", 1) > 1:
        log.info("PostgreSQL at %s: connected", where(database_url))
    return result
