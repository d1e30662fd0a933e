"""``services.webhooks.signed.SignedWebhook`` against a real local HTTP server: each attempt
is recorded, 5xx (and 408, 429) are tried again after a growing pause, any other 4xx settles
the delivery at once, the last attempt settles it whatever it met, and every POST is signed
over its raw body and names its delivery."""

from collections.abc import Iterator
from email.message import Message

import pytest

from services.webhooks.signed import Attempt, SignedWebhook, signature
from tests.webhook_endpoint import webhook_endpoint

SECRET = "signed-webhook-secret"


class Answering:
    def __init__(self, statuses: list[int]) -> None:
        self.statuses = statuses
        self.received: list[tuple[bytes, str | None, str | None]] = []


@pytest.fixture
def answering() -> Iterator[tuple[str, Answering]]:
    state = Answering([])

    def answer(body: bytes, headers: Message) -> int:
        delivery = headers.get("X-Feedbackloop-Delivery")
        state.received.append((body, headers.get("X-Feedbackloop-Signature"), delivery))
        return state.statuses.pop(0) if state.statuses else 200

    with webhook_endpoint(answer) as url:
        yield f"{url}/hooks", state


async def delivered(url: str, *, max_attempts: int = 5) -> tuple[str | None, list[Attempt]]:
    webhook = SignedWebhook(url=url, secret=SECRET, max_attempts=max_attempts, backoff_seconds=0.01)
    attempts: list[Attempt] = []

    async def record(attempt: Attempt) -> None:
        attempts.append(attempt)

    await webhook.open()
    try:
        return await webhook.deliver(b'{"id":"e-1"}', "e-1", record), attempts
    finally:
        await webhook.close()


async def test_a_failing_answer_is_tried_again_until_one_is_received(
    answering: tuple[str, Answering],
) -> None:
    url, state = answering
    state.statuses[:] = [503, 429, 200]
    error, attempts = await delivered(url)
    assert error is None
    assert attempts == [
        Attempt(1, 503, "HTTP 503", False),
        Attempt(2, 429, "HTTP 429", False),
        Attempt(3, 200, None, True),
    ]
    expected = signature(SECRET, b'{"id":"e-1"}')
    assert state.received == [(b'{"id":"e-1"}', expected, "e-1")] * 3


async def test_a_refusal_settles_the_delivery_at_once(answering: tuple[str, Answering]) -> None:
    url, state = answering
    state.statuses[:] = [404, 200]
    error, attempts = await delivered(url)
    assert (error, attempts) == ("HTTP 404", [Attempt(1, 404, "HTTP 404", True)])


async def test_the_last_attempt_settles_the_delivery(answering: tuple[str, Answering]) -> None:
    url, state = answering
    state.statuses[:] = [500, 500, 500]
    error, attempts = await delivered(url, max_attempts=2)
    assert error == "HTTP 500"
    assert [(a.number, a.final) for a in attempts] == [(1, False), (2, True)]
    assert len(state.received) == 2


async def test_a_network_error_is_tried_again_and_named() -> None:
    error, attempts = await delivered("http://127.0.0.1:9/nobody", max_attempts=2)
    assert error is not None
    assert error.startswith("ConnectError")
    assert [(a.status_code, a.final) for a in attempts] == [(None, False), (None, True)]
