"""POSTing CloudEvents to one webhook, signed, retrying what may pass on a later try.

The body is signed with HMAC-SHA256 over its raw bytes (``X-Feedbackloop-Signature:
sha256=<hex>``) and names its delivery (``X-Feedbackloop-Delivery``: the CloudEvent's id, so a
receiver de-duplicates). 5xx answers, 408, 429 and network errors are retried with
exponential backoff (tenacity), up to ``max_attempts``; any other 4xx is final at once. Each
attempt is told to the caller's ``record``, which keeps it as an event: whether a delivery is
settled is then its aggregate's own state.
"""

import hashlib
import hmac
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx
from tenacity import AsyncRetrying, retry_if_result, stop_after_attempt, wait_exponential

SIGNATURE_HEADER = "X-Feedbackloop-Signature"
DELIVERY_HEADER = "X-Feedbackloop-Delivery"
RETRIED_4XX = {408, 429}


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


async def post_signed(
    client: httpx.AsyncClient, url: str, secret: str, body: bytes, delivery_id: str
) -> tuple[int | None, str | None, bool]:
    """One signed POST: the answer's status (None: no answer), the error (None: received),
    and whether the error is final (a 4xx other than 408 and 429). Every webhook the service
    posts is posted here, signed one way."""
    headers = {
        "Content-Type": "application/cloudevents+json",
        SIGNATURE_HEADER: signature(secret, body),
        DELIVERY_HEADER: delivery_id,
    }
    status, error = None, None
    try:
        response = await client.post(url, content=body, headers=headers)
        status = response.status_code
        if not 200 <= status < 300:
            error = f"HTTP {status}"
    except httpx.HTTPError as exc:
        error = f"{type(exc).__name__}: {exc}"
    permanent = status is not None and 400 <= status < 500 and status not in RETRIED_4XX
    return status, error, permanent


@dataclass(frozen=True)
class Attempt:
    """One POST of a delivery: its number (from 1), the answer's status or the error, and
    whether it settles the delivery (received, refused for good, or the last try)."""

    number: int
    status_code: int | None
    error: str | None
    final: bool


Record = Callable[[Attempt], Awaitable[None]]


class SignedWebhook:
    """The webhook at ``url``, signed with ``secret``: ``open`` before ``deliver``, then
    ``close``."""

    def __init__(
        self,
        *,
        url: str,
        secret: str,
        max_attempts: int = 5,
        backoff_seconds: float = 1.0,
        timeout_seconds: float = 10.0,
    ) -> None:
        self.url, self.secret = url, secret
        self.max_attempts, self.backoff = max_attempts, backoff_seconds
        self.timeout = timeout_seconds
        self._client: httpx.AsyncClient | None = None

    async def open(self) -> None:
        self._client = httpx.AsyncClient(timeout=self.timeout)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def deliver(self, body: bytes, delivery_id: str, record: Record) -> str | None:
        """Deliver ``body`` until it is settled; answers the final error, or None when it was
        received. A stop meanwhile cancels the task, and the next leader resumes. The pause
        after attempt n is ``backoff_seconds * 2**(n-1)``."""
        client = self._client
        assert client is not None, "the reader opens the webhook before delivering"
        tried = 0

        async def attempt() -> Attempt:
            nonlocal tried
            tried += 1
            status, error, permanent = await post_signed(
                client, self.url, self.secret, body, delivery_id
            )
            final = error is None or permanent or tried == self.max_attempts
            made = Attempt(tried, status, error, final)
            await record(made)
            return made

        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_attempts),
            wait=wait_exponential(multiplier=self.backoff),
            retry=retry_if_result(lambda made: not made.final),
            reraise=True,
        )
        last: Attempt = await retrying(attempt)
        return last.error
