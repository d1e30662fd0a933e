"""When and how long to wait before sending a request again (decisions D206): on 429 and 503
and when the connection fails, with exponential backoff and full jitter, never sooner than
the service's ``Retry-After``. Safe for writes because every write carries an
Idempotency-Key, the same one on each attempt: a repeat answers the first result."""

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

RETRIED_STATUSES = frozenset({429, 503})


@dataclass(frozen=True)
class Retries:
    attempts: int = 4  # in all, the first included
    base: float = 0.2  # seconds before the second attempt, at most (jitter draws below it)
    cap: float = 10.0  # the longest wait

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """The wait after ``attempt`` (0 the first) failed: full jitter over the exponential
        bound, and at least what Retry-After asked for."""
        bound = min(self.cap, self.base * 2**attempt)
        drawn = random.uniform(0, bound)
        return min(self.cap, max(drawn, retry_after or 0.0))


DEFAULT_RETRIES = Retries()


def retry_after(response: httpx.Response) -> float | None:
    """Retry-After as seconds: a number of seconds or an HTTP date."""
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, (parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds())
    except (TypeError, ValueError):
        return None


def retried(response: httpx.Response) -> bool:
    return response.status_code in RETRIED_STATUSES
