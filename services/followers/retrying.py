"""The followers' one backoff (tenacity): how an event is tried again before it is parked,
and how a follower stands by after a failure of its surroundings."""

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from services.followers.transient import is_transient

MAX_PAUSE = 30.0  # seconds: the longest a backoff waits


def until_stopped(stop: asyncio.Event) -> Callable[[float], Awaitable[None]]:
    """A backoff's sleep that a stop ends at once."""

    async def sleep(seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=seconds)

    return sleep


def event_attempts(attempts: int, backoff: float) -> AsyncRetrying:
    """``attempts`` tries of one event, ``backoff`` seconds between the first two and twice
    as long each time after; a transient failure is not the event's: it is raised at once,
    and so is a cancellation (a stop)."""
    return AsyncRetrying(
        stop=stop_after_attempt(max(attempts, 1)),
        wait=wait_exponential(multiplier=backoff, max=MAX_PAUSE),
        retry=retry_if_exception(lambda e: isinstance(e, Exception) and not is_transient(e)),
        reraise=True,
    )


async def failure_of(
    retrying: AsyncRetrying, work: Callable[[], Awaitable[None]]
) -> BaseException | None:
    """Run ``work`` with ``retrying``; the last failure if it never went through (a
    transient one is raised)."""
    try:
        async for attempt in retrying:
            with attempt:
                await work()
    except Exception as error:
        if is_transient(error):
            raise
        return error
    return None


def standing_by(
    backoff: float, stop: asyncio.Event, before_sleep: Callable[[RetryCallState], None]
) -> AsyncRetrying:
    """A follower's retries after a failure of its surroundings: ``backoff`` seconds, then
    twice as long each time up to ``MAX_PAUSE``; anything else is raised (a bug of ours)."""
    return AsyncRetrying(
        wait=wait_exponential(multiplier=backoff, max=MAX_PAUSE),
        retry=retry_if_exception(is_transient),
        before_sleep=before_sleep,
        sleep=until_stopped(stop),
    )
