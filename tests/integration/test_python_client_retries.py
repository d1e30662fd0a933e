"""The Python client's retries (decisions D206) through a stand-in in front of the real
service: one that answers 503 with Retry-After once before forwarding, and one that forwards
the write and then loses the answer (503): the retry carries the same Idempotency-Key, so
the service answers the first record and stores nothing twice (SPEC C11)."""

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from feedbackloop_client import AsyncClient, Client, ConnectionFailed, Retries

from tests.conftest import Keys, settings_for
from tests.integration.served_api import ServedApi, served_api
from tests.standin import free_port, served

RATING = {"project_id": "p", "subject_kind": "run", "subject_ref": "run-1", "kind": "rating"}


@pytest.fixture
def api(database_url: str, keys: Keys) -> Iterator[ServedApi]:
    with served_api(settings_for(database_url, keys), ["feedback_list", "access"]) as started:
        yield started


class FailsOnce:
    """An ASGI stand-in: the first request under each Idempotency-Key fails (503), before
    (``forward_first=False``) or after (``True``) it reached the service."""

    def __init__(self, upstream: str, forward_first: bool) -> None:
        self.upstream, self.forward_first = upstream, forward_first
        self.keys: list[str | None] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        asked = {k.decode(): v.decode() for k, v in scope["headers"] if k != b"host"}
        key = asked.get("idempotency-key")
        first = key not in self.keys
        self.keys.append(key)
        status, answer = 503, b'{"error": "unavailable", "message": "stand-in", "field": null}'
        if not first or self.forward_first:
            async with httpx.AsyncClient(base_url=self.upstream) as http:
                query = scope["query_string"].decode()
                forwarded = await http.request(
                    scope["method"], scope["path"] + (f"?{query}" if query else ""),
                    content=body, headers=asked,
                )  # fmt: skip
            if not first:
                status, answer = forwarded.status_code, forwarded.content
        headers = [(b"content-type", b"application/json"), (b"retry-after", b"0")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": answer})


@pytest.mark.parametrize("forward_first", [False, True])
async def test_a_write_retried_after_a_503_is_recorded_once(
    api: ServedApi, keys: Keys, forward_first: bool
) -> None:
    standin = FailsOnce(api.url, forward_first)
    async with served(standin) as port:
        url = f"http://127.0.0.1:{port}"
        before = await asyncio.to_thread(api.event_count)
        async with AsyncClient(url, api_key=keys.a, retries=Retries(base=0.01)) as client:
            written = await client.record_feedback(**RATING, rating=5)
        # The blocking client retries the same way.
        with Client(url, api_key=keys.a, retries=Retries(base=0.01)) as blocking:
            again = await asyncio.to_thread(blocking.record_feedback, **RATING, rating=4)
        assert standin.keys[0] == standin.keys[1]
        assert standin.keys[2] == standin.keys[3]
        assert len(standin.keys) == 4
        assert standin.keys[0] != standin.keys[2]
        assert await asyncio.to_thread(api.event_count) == before + 2  # one record each
        assert written.feedback_id != again.feedback_id


def test_a_service_out_of_reach_is_a_typed_error_after_the_retries(keys: Keys) -> None:
    attempts: list[httpx.Request] = []
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with Client(url, api_key=keys.a, retries=Retries(attempts=3, base=0.01)) as client:
        client.http.event_hooks["request"].append(attempts.append)
        with pytest.raises(ConnectionFailed):
            client.record_feedback(**RATING, rating=5)
    assert len(attempts) == 3
    assert len({request.headers["Idempotency-Key"] for request in attempts}) == 1
