"""The HTTP door (issue 8): what a client can send that the service must refuse with a 4xx and
the one error shape, never a 5xx, and never storing anything. In-process (the ASGI app) on a
real PostgreSQL."""

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from services.bootstrap import Runtime
from services.store import EVENTS_TABLE
from tests.conftest import Keys

FEEDBACK = {"projectId": "p", "subjectKind": "run", "subjectRef": "run-1", "kind": "rating"}


@pytest.fixture
async def client(runtime: Runtime, keys: Keys) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=runtime.app(), raise_app_exceptions=False)
    headers = {"Authorization": f"Bearer {keys.a}"}
    async with httpx.AsyncClient(
        transport=transport, base_url="http://test", headers=headers
    ) as http:
        yield http


async def event_count(runtime: Runtime) -> int:
    count = await runtime.pool.fetchval(f"SELECT count(*) FROM {EVENTS_TABLE}")
    assert isinstance(count, int)
    return count


def refused(answer: httpx.Response, status: int, field: str | None = None) -> dict[str, Any]:
    """The answer is ``status`` with the one error shape, naming ``field`` if given."""
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = answer.json()
    assert {"error", "message"} <= body.keys(), body
    if field is not None:
        assert body.get("field") == field, body
    return body


def nested(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


WRITE_ROUTES = [
    "/factory/feedback",
    "/factory/reports",
    "/factory/reports/wrong-answer",
    f"/factory/reports/{uuid.uuid4()}/review",
    "/factory/evals/cases",
    f"/factory/evals/cases/{uuid.uuid4()}/confirm",
    f"/factory/evals/cases/{uuid.uuid4()}/runs",
]


@pytest.mark.parametrize("route", WRITE_ROUTES)
async def test_json_nested_a_thousand_deep_is_refused_on_every_json_route(
    client: httpx.AsyncClient, runtime: Runtime, route: str
) -> None:
    """Issue 8 item 1: a RecursionError was a 500; the depth is bounded before parsing."""
    for body in (nested(1000), b"[" * 1000 + b"]" * 1000):
        answer = await client.post(route, content=body)
        refused(answer, 422, "body")
    answer = await client.patch(f"/factory/evals/cases/{uuid.uuid4()}", content=nested(1000))
    refused(answer, 422, "body")
    assert await event_count(runtime) == 0


async def test_brackets_inside_strings_do_not_count_as_nesting(client: httpx.AsyncClient) -> None:
    """Issue 8 item 1: only structure counts towards the depth bound."""
    body = {**FEEDBACK, "rating": 4, "subjectRef": "{[" * 200 + '\\"'}
    answer = await client.post("/factory/feedback", json=body)
    assert answer.status_code == 201, answer.text


@pytest.mark.parametrize(
    ("route", "parameter"),
    [
        ("/factory/feedback?subjectRef=a%00b", "subjectRef"),
        ("/factory/reports/inbox?agent=a%00b", "agent"),
        ("/factory/reports/inbox?addressee=%00", "addressee"),
        ("/factory/evals/cases?agent=x%00", "agent"),
        ("/factory/artifacts/a%00b", "ref"),
    ],
)
async def test_a_nul_in_a_query_parameter_or_path_segment_is_refused_naming_it(
    client: httpx.AsyncClient, route: str, parameter: str
) -> None:
    """Issue 8 item 1: PostgreSQL text cannot hold NUL; it was a 500 from the query."""
    refused(await client.get(route), 422, parameter)


@pytest.mark.parametrize("route", ["/factory/feedback", "/factory/reports/inbox"])
async def test_a_cursor_beyond_64_bits_is_refused(client: httpx.AsyncClient, route: str) -> None:
    """Issue 8 item 1: ``before`` past a bigint was an OverflowError (500)."""
    refused(await client.get(route, params={"before": 2**64}), 422, "before")
    assert (await client.get(route, params={"before": 2**63 - 1})).status_code == 200
