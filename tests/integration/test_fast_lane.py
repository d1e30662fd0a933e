"""The fast lane of ``POST /factory/feedback`` (issue 12, services/api.py ``FastLane``) answers
exactly what the FastAPI route answers, for every request it takes: each request below is
sent to the app as served and to the same app with the lane removed, on a real PostgreSQL,
and the two answers (status, content type, body) must be equal."""

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from services.api import FastLane
from services.bootstrap import Runtime
from tests.conftest import Keys

FEEDBACK = {"projectId": "p", "subjectKind": "run", "subjectRef": "run-1", "kind": "rating"}


def client_of(app: FastAPI) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://test")


@pytest.fixture
async def both(runtime: Runtime) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    served = runtime.app()
    assert any(isinstance(r, FastLane) for r in served.router.routes)
    without = runtime.app()
    without.router.routes[:] = [r for r in without.router.routes if not isinstance(r, FastLane)]
    async with client_of(served) as lane, client_of(without) as route:
        yield lane, route


def cases(keys: Keys) -> list[tuple[bytes, dict[str, str]]]:
    a = {"Authorization": f"Bearer {keys.a}"}
    valid = json.dumps({**FEEDBACK, "rating": 4}).encode()
    return [
        (b'{"rating":5,"rating":1}', a),
        (b'{"a":NaN}', a),
        (b"[" * 40 + b"]" * 40, a),
        (b"", a),
        (b"not json", a),
        (json.dumps({**FEEDBACK, "rating": "4"}).encode(), a),
        (json.dumps({**FEEDBACK, "rating": 4, "givenBy": "m"}).encode(), a),
        (json.dumps({**FEEDBACK, "rating": 4, "colour": "red"}).encode(), a),
        (json.dumps({**FEEDBACK, "subjectRef": "a\x00b", "rating": 4}).encode(), a),
        (json.dumps(FEEDBACK).encode(), a),  # a rating without its value: the decision's 422
        (b'{"subjectRef":"' + b"x" * 70_000 + b'"}', a),  # 413
        (valid, {"Authorization": "Bearer not-a-key"}),
        (valid, {"Authorization": f"Bearer {keys.a_read_only}"}),
        (valid, {"Authorization": f"bearer   {keys.a_no_scope}  "}),
        (valid, {}),  # the route's: no key
        (valid, {"Authorization": f"Basic {keys.a}"}),  # the route's
        (valid, {**a, "Idempotency-Key": ""}),  # the route's
        (valid, {**a, "Idempotency-Key": "k" * 201}),  # the route's
    ]


async def test_the_lane_refuses_every_request_as_the_route_does(
    both: tuple[httpx.AsyncClient, httpx.AsyncClient], keys: Keys
) -> None:
    for body, headers in cases(keys):
        answers = [await c.post("/factory/feedback", content=body, headers=headers) for c in both]
        shown = [(a.status_code, a.headers["content-type"], a.json()) for a in answers]
        assert shown[0] == shown[1], (body[:80], headers)
        assert 400 <= answers[0].status_code < 500


async def test_the_lane_records_and_repeats_as_the_route_does(
    both: tuple[httpx.AsyncClient, httpx.AsyncClient], keys: Keys
) -> None:
    """SPEC C11 through either door: one key, one feedback; another body under it, 409."""
    lane, route = both
    key = str(uuid.uuid4())
    headers = {"Authorization": f"Bearer {keys.a}", "Idempotency-Key": key}
    body: dict[str, Any] = {**FEEDBACK, "rating": 3}
    first = await lane.post("/factory/feedback", json=body, headers=headers)
    again = await route.post("/factory/feedback", json=body, headers=headers)
    assert (first.status_code, again.status_code) == (201, 200), (first.text, again.text)
    assert first.json()["feedbackId"] == again.json()["feedbackId"]
    assert first.headers["content-type"] == again.headers["content-type"]
    other = {**body, "rating": 2}
    conflicts = [await c.post("/factory/feedback", json=other, headers=headers) for c in both]
    assert [c.status_code for c in conflicts] == [409, 409]
    assert conflicts[0].json() == conflicts[1].json()
