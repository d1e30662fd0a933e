"""Property tests of the HTTP door: random JSON — deep, wide, with duplicate
keys, every JSON type in every field — sent to each write route answers a 4xx in the one
error shape and stores nothing (the rows of the event table are counted before and after)."""

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.processes.bootstrap import Runtime
from tests.conftest import Keys, event_count

SOME_ID = str(uuid.uuid4())
# Each write route and the fields its body has (so values of every type land in real fields).
WRITES = {
    "/factory/feedback": ["projectId", "subjectKind", "subjectRef", "kind", "rating",
                          "commentRef", "correctedArtifactRef"],
    "/factory/reports": ["category", "message", "sidePanel", "extraContext"],
    "/factory/reports/wrong-answer": ["thread", "messageRef", "prompt", "context", "reply",
                                      "account", "expected", "evidence", "kind", "maintainers"],
    f"/factory/reports/{SOME_ID}/review": ["status", "change", "link", "reason"],
    f"/factory/reports/{SOME_ID}/submit": [],
    f"/factory/reports/{SOME_ID}/lift": [],
    "/factory/evals/cases": ["source"],
    f"/factory/evals/cases/{SOME_ID}/confirm": ["confirmed"],
    f"/factory/evals/cases/{SOME_ID}/runs": ["conversations", "effort"],
    f"PATCH /factory/evals/cases/{SOME_ID}": ["prompt", "context", "mustGround",
                                              "mustNotAssert", "mustAssert", "model"],
}  # fmt: skip

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=20,
)


def typed_bodies(fields: list[str]) -> st.SearchStrategy[bytes]:
    """The route's own fields with values of any JSON type."""
    names = st.sampled_from(fields) if fields else st.text()
    return st.dictionaries(names, json_values, min_size=1).map(lambda d: json.dumps(d).encode())


def deep(depth: int) -> bytes:
    return b'{"a":[' * depth + b"1" + b"]}" * depth


wide = st.integers(1_000, 20_000).map(lambda n: json.dumps({f"k{i}": i for i in range(n)}).encode())
duplicated = st.sampled_from(["status", "rating", "confirmed", "category", "source"]).map(
    lambda key: f'{{"{key}": 1, "{key}": 2}}'.encode()
)
hostile = st.one_of(
    st.integers(17, 3_000).map(deep),
    wide,
    duplicated,
    st.binary(max_size=200),
    json_values.map(lambda v: json.dumps(v).encode()),
)


@pytest.fixture
async def client(runtime: Runtime, keys: Keys) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=runtime.app(), raise_app_exceptions=False)
    headers = {"Authorization": f"Bearer {keys.a}", "Content-Type": "application/json"}
    async with httpx.AsyncClient(
        transport=transport, base_url="http://test", headers=headers
    ) as http:
        yield http


async def send(client: httpx.AsyncClient, route: str, body: bytes) -> httpx.Response:
    """POST, unless the route names its method ("PATCH /…")."""
    method, _, path = route.rpartition(" ")
    return await client.request(method or "POST", path, content=body)


async def refused_and_nothing_stored(
    client: httpx.AsyncClient, runtime: Runtime, route: str, body: bytes
) -> None:
    before = await event_count(runtime)
    answer = await send(client, route, body)
    assert 400 <= answer.status_code < 500, (route, body[:200], answer.text)
    assert answer.headers["content-type"].startswith("application/json")
    shape: dict[str, Any] = answer.json()
    assert {"error", "message", "field", "problems"} <= shape.keys(), shape
    assert await event_count(runtime) == before


PROPERTY = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@PROPERTY
@given(route=st.sampled_from(sorted(WRITES)), data=st.data())
async def test_any_json_in_the_fields_of_a_write_is_refused_or_stores_nothing(
    client: httpx.AsyncClient, runtime: Runtime, route: str, data: st.DataObject
) -> None:
    """Every JSON type in every field of every write route. The
    report and case ids do not exist, so no such body can be accepted."""
    body = data.draw(typed_bodies(WRITES[route]))
    if route in ("/factory/feedback", "/factory/reports", "/factory/reports/wrong-answer"):
        # A drawn body could be a valid command: then it is accepted, nothing else.
        before = await event_count(runtime)
        answer = await send(client, route, body)
        if answer.status_code < 300:
            assert await event_count(runtime) > before
            return
        assert answer.status_code < 500, answer.text
        assert {"error", "message", "field", "problems"} <= answer.json().keys()
        assert await event_count(runtime) == before
        return
    await refused_and_nothing_stored(client, runtime, route, body)


@PROPERTY
@given(route=st.sampled_from(sorted(WRITES)), body=hostile)
async def test_deep_wide_duplicated_or_broken_json_is_refused_and_stores_nothing(
    client: httpx.AsyncClient, runtime: Runtime, route: str, body: bytes
) -> None:
    """Nesting, width, duplicate keys, not JSON at all."""
    await refused_and_nothing_stored(client, runtime, route, body)
