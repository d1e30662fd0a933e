"""The fast lane of ``POST /factory/feedback`` (services/edge/fast_lane.py ``FastLane`` and
``Api``) answers exactly what the FastAPI route answers, for every request it takes, through
either of its doors: served in front of the middleware (the app as it runs), and as the
router's first route (the same app with one more middleware, as with OpenTelemetry). Each
request below goes to the three on a real PostgreSQL, and the answers (status, every header,
body bytes) must be equal."""

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from starlette.types import Message, Receive, Scope, Send

from services.edge.fast_lane import FastLane
from services.observing.tracing import current_traceparent
from services.processes.bootstrap import Runtime
from tests.conftest import Keys

FEEDBACK = {"projectId": "p", "subjectKind": "run", "subjectRef": "run-1", "kind": "rating"}


class Passing:
    """A middleware that only passes requests on: with it, the lanes stay in the router."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


@dataclass
class Doors:
    front: FastAPI  # the app as served: the lane before the middleware
    router: FastAPI  # the lane as the router's first route, behind the middleware
    route: FastAPI  # no lane: the FastAPI route with its dependencies


@pytest.fixture
def doors(runtime: Runtime) -> Doors:
    front = runtime.app()
    assert any(isinstance(r, FastLane) for r in front.router.routes)
    router = runtime.app()
    router.add_middleware(Passing)
    route = runtime.app()
    route.router.routes[:] = [r for r in route.router.routes if not isinstance(r, FastLane)]
    return Doors(front, router, route)


def client_of(app: FastAPI) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://test")


@pytest.fixture
async def clients(doors: Doors) -> AsyncIterator[list[httpx.AsyncClient]]:
    async with (
        client_of(doors.front) as front,
        client_of(doors.router) as router,
        client_of(doors.route) as route,
    ):
        yield [front, router, route]


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
        (valid, {"Authorization": "Bearer not-a-key"}),  # 401 and its WWW-Authenticate
        (valid, {"Authorization": f"Bearer {keys.a_read_only}"}),
        (valid, {"Authorization": f"bearer   {keys.a_no_scope}  "}),
        (
            valid,
            {
                "Authorization": f"Bearer {keys.a_read_only}",
                "traceparent": "no",
                "Idempotency-Key": "x",
            },
        ),
        (valid, {}),  # the route's: no key
        (valid, {"Authorization": f"Basic {keys.a}"}),  # the route's
        (valid, {**a, "Idempotency-Key": ""}),  # the route's
        (valid, {**a, "Idempotency-Key": "k" * 201}),  # the route's
    ]


def shown(answer: httpx.Response) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    return answer.status_code, answer.headers.raw, answer.content


async def test_the_lane_refuses_every_request_as_the_route_does(
    clients: list[httpx.AsyncClient], keys: Keys
) -> None:
    for body, headers in cases(keys):
        answers = [
            await c.post("/factory/feedback", content=body, headers=headers) for c in clients
        ]
        assert shown(answers[0]) == shown(answers[1]) == shown(answers[2]), (body[:80], headers)
        assert 400 <= answers[0].status_code < 500


async def test_the_lane_records_and_repeats_as_the_route_does(
    clients: list[httpx.AsyncClient], keys: Keys
) -> None:
    """SPEC C11 through every door: one key, one feedback; another body under it, 409."""
    key = str(uuid.uuid4())
    headers = {"Authorization": f"Bearer {keys.a}", "Idempotency-Key": key}
    body: dict[str, Any] = {**FEEDBACK, "rating": 3}
    answers = [await c.post("/factory/feedback", json=body, headers=headers) for c in clients]
    assert [a.status_code for a in answers] == [201, 200, 200], [a.text for a in answers]
    assert len({a.json()["feedbackId"] for a in answers}) == 1
    assert len({a.json()["position"] for a in answers}) == 3  # sealed afresh each time
    assert len({tuple(a.json()) for a in answers}) == 1  # the same fields, in the same order
    lengths = {len(a.content) for a in answers}
    assert len(lengths) == 1
    assert {tuple(a.headers.raw) for a in answers} == {
        ((b"content-length", str(*lengths).encode()), (b"content-type", b"application/json"))
    }
    other = {**body, "rating": 2}
    conflicts = [await c.post("/factory/feedback", json=other, headers=headers) for c in clients]
    assert [c.status_code for c in conflicts] == [409, 409, 409]
    assert shown(conflicts[0]) == shown(conflicts[1]) == shown(conflicts[2])


async def asgi(app: FastAPI, scope: Scope, messages: list[Message]) -> list[Message]:
    """Call ``app`` as a server does; answer what it sent, and what it raised last."""
    given, sent = iter(messages), []

    async def receive() -> Message:
        return next(given)

    async def send(message: Message) -> None:
        sent.append(message)

    try:
        await app(scope, receive, send)
    except Exception as error:
        sent.append({"raised": type(error)})
    return sent


def http_scope(headers: list[tuple[bytes, bytes]]) -> Scope:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/factory/feedback",
        "raw_path": b"/factory/feedback",
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 5000),
        "server": ("test", 80),
    }


async def test_a_client_gone_mid_body_is_answered_as_the_route_answers_it(
    doors: Doors, keys: Keys
) -> None:
    """A disconnect while the body is read: answered 400 (sent into the void by a real
    server), nothing raised: raised to the server, it would be logged as an error of the app
    with a traceback, and the client's going is no failure."""
    headers = [(b"authorization", f"Bearer {keys.a}".encode())]
    messages: list[Message] = [
        {"type": "http.request", "body": b'{"projectId":', "more_body": True},
        {"type": "http.disconnect"},
    ]
    sent = [
        await asgi(app, http_scope(headers), messages)
        for app in (doors.front, doors.router, doors.route)
    ]
    assert sent[0] == sent[1] == sent[2]
    assert sent[0][0]["status"] == 400
    assert not [m for m in sent[0] if "raised" in m]


async def test_the_front_door_hands_the_trace_to_the_bus_and_forgets_it(
    doors: Doors, keys: Keys
) -> None:
    """TraceContext's work, done by the lane in front: the request's valid traceparent is
    the bus's while the command is decided (the relay's test follows it to Kafka), and
    only then."""
    traceparent = f"00-{uuid.uuid4().hex}-{uuid.uuid4().hex[:16]}-01"
    headers = [
        (b"authorization", f"Bearer {keys.a}".encode()),
        (b"traceparent", traceparent.encode()),
        (b"traceparent", b"00-" + b"1" * 32 + b"-" + b"2" * 16 + b"-01"),  # the first counts
    ]
    seen: list[str | None] = []
    lane = next(r for r in doors.front.router.routes if isinstance(r, FastLane))
    answer = lane.answer

    async def watched(raw: bytes, key: str, idempotency_key: str | None) -> tuple[int, bytes]:
        seen.append(current_traceparent.get())
        return await answer(raw, key, idempotency_key)

    lane.answer = watched
    body = json.dumps({**FEEDBACK, "rating": 5}).encode()
    sent = await asgi(doors.front, http_scope(headers), [{"type": "http.request", "body": body}])
    assert sent[0]["status"] == 201, sent
    assert seen == [traceparent]
    assert current_traceparent.get() is None
    # The first request settled the middleware, as Starlette's first request does: the
    # front's choice cannot go stale under middleware added later.
    with pytest.raises(RuntimeError):
        doors.front.add_middleware(Passing)
