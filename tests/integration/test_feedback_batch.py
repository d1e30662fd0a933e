"""``POST /factory/feedback:batch`` on a real PostgreSQL: each item's own
result (201, 200 on a repeat, 409, 422) in the error shape, per-item idempotency (SPEC C11),
one transaction for the batch's appends, as strict as the single route, tenants apart."""

import uuid
from typing import Any

import httpx
import pytest

from contracts.answers import FeedbackBatchWritten
from services.processes.bootstrap import Runtime
from services.store.event_store import EVENTS_TABLE
from tests.conftest import Keys, event_count

BATCH = "/factory/feedback:batch"


def rating(n: int, **more: Any) -> dict[str, Any]:
    item = {"projectId": "p", "subjectKind": "run", "subjectRef": f"run-{n}", "kind": "rating"}
    return item | {"rating": 1 + n % 5} | more


async def transactions(runtime: Runtime) -> int:
    """How many transactions wrote the events: the distinct xmin of their rows."""
    count = await runtime.pool.fetchval(f"SELECT count(DISTINCT xmin::text) FROM {EVENTS_TABLE}")
    assert isinstance(count, int)
    return count


def answered(answer: httpx.Response) -> list[dict[str, Any]]:
    """The batch's answer is a 200 of its declared model; its items, in order."""
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    FeedbackBatchWritten.model_validate(answer.json())
    items: list[dict[str, Any]] = answer.json()["items"]
    return items


async def test_each_item_is_recorded_with_its_own_result_in_one_transaction(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    items = [rating(n, idempotencyKey=f"k-{n}") for n in range(250)]
    answer = await client.post(BATCH, json={"items": items})
    results = answered(answer)
    assert [r["status"] for r in results] == [201] * 250
    assert len({r["feedbackId"] for r in results}) == 250
    # One append for the whole batch (SPEC C11's receipts aside, each item one event).
    assert await event_count(runtime) == 250
    assert await transactions(runtime) == 1
    # The batch's position reflects every item: a read at it finds them all.
    runtime.start_projections(["feedback_list"])
    position = answer.json()["position"]
    listed = await client.get(
        "/factory/feedback", params={"minPosition": position, "limit": 200, "subjectRef": "run-7"}
    )
    assert listed.status_code == 200, listed.text
    assert [i["feedbackId"] for i in listed.json()["items"]] == [results[7]["feedbackId"]]


async def test_a_repeated_batch_answers_200_per_item_and_appends_nothing(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """SPEC C11, per item: the same key and item answer the same feedback."""
    items = [rating(n, idempotencyKey=f"again-{n}") for n in range(20)]
    first = answered(await client.post(BATCH, json={"items": items}))
    stored = await event_count(runtime)
    again = answered(await client.post(BATCH, json={"items": items}))
    assert [r["status"] for r in again] == [200] * 20
    assert [r["feedbackId"] for r in again] == [r["feedbackId"] for r in first]
    assert await event_count(runtime) == stored


async def test_without_item_keys_the_request_key_and_index_make_each_item_s_key(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    items = [rating(n) for n in range(5)]
    headers = {"Idempotency-Key": f"batch-{uuid.uuid4()}"}
    first = answered(await client.post(BATCH, json={"items": items}, headers=headers))
    again = answered(await client.post(BATCH, json={"items": items}, headers=headers))
    assert [r["status"] for r in first] == [201] * 5
    assert [r["status"] for r in again] == [200] * 5
    assert [r["feedbackId"] for r in again] == [r["feedbackId"] for r in first]
    # Without any key, each item is new every time.
    fresh = answered(await client.post(BATCH, json={"items": items}))
    assert [r["status"] for r in fresh] == [201] * 5
    assert await event_count(runtime) == 10


async def test_an_item_key_is_the_single_route_s_idempotency_key(
    client: httpx.AsyncClient,
) -> None:
    """One key space for both routes: a batch item repeats a single POST under its key."""
    single = await client.post(
        "/factory/feedback", json=rating(1), headers={"Idempotency-Key": "s"}
    )
    assert single.status_code == 201, single.text
    (result,) = answered(await client.post(BATCH, json={"items": [rating(1, idempotencyKey="s")]}))
    assert result == {"status": 200, "feedbackId": single.json()["feedbackId"]}


async def test_items_refused_by_a_decision_do_not_spoil_the_good_ones(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """What only a decision can tell refuses the item alone (SPEC C04, C06, C11)."""
    reused = answered(await client.post(BATCH, json={"items": [rating(1, idempotencyKey="x")]}))
    missing = "artifact:sha256:" + "0" * 64
    items = [
        rating(2),
        {k: v for k, v in rating(3).items() if k != "rating"},  # a rating needs its value
        rating(4, kind="comment", commentRef=missing),  # no such artifact in this tenant
        rating(5, idempotencyKey="x"),  # the key was used for another item: 409
        rating(6),
    ]
    results = answered(await client.post(BATCH, json={"items": items}))
    assert [r["status"] for r in results] == [201, 422, 422, 409, 201]
    assert [r.get("field") for r in results] == [None, "rating", "commentRef", None, None]
    for refused in (r for r in results if r["status"] >= 400):
        assert {"error", "message", "field", "problems", "feedbackId"} <= refused.keys(), refused
    assert results[3]["feedbackId"] == reused[0]["feedbackId"]
    assert await event_count(runtime) == 3


@pytest.mark.parametrize(
    ("item", "field"),
    [
        (rating(3, rating=6), "items.1.rating"),  # out of range
        (rating(4, givenBy="mallory"), "items.1.givenBy"),  # a stamped field
        ("not an object", "items.1"),
        (rating(6, colour="red"), "items.1.colour"),  # unknown field
        (rating(7, rating="5"), "items.1.rating"),  # no coercion (STYLE 12)
        (rating(8, idempotencyKey=""), "items.1.idempotencyKey"),
        (rating(9, subjectRef="a\x00b"), "items.1.subjectRef"),
    ],
)
async def test_an_item_that_breaks_the_schema_refuses_the_whole_batch(
    client: httpx.AsyncClient, runtime: Runtime, item: Any, field: str
) -> None:
    """Strict like the single route (STYLE 12): the published schema holds for the whole
    body, so a schema-valid batch is what gets decided; nothing is stored."""
    answer = await client.post(BATCH, json={"items": [rating(1), item, rating(2)]})
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert body["field"] == field
    assert {"error", "message", "field", "problems"} <= body.keys()
    assert await event_count(runtime) == 0


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"items": [rating(n) for n in range(1001)]}, 422, "items"),
        ({"items": []}, 422, "items"),
        ({"items": {"a": rating(1)}}, 422, "items"),
        ({"items": [rating(1)], "extra": 1}, 422, "extra"),
        ([rating(1)], 422, "body"),
    ],
)
async def test_a_batch_is_refused_whole_when_its_envelope_is_wrong(
    client: httpx.AsyncClient, runtime: Runtime, body: Any, status: int, field: str
) -> None:
    answer = await client.post(BATCH, json=body)
    assert answer.status_code == status, answer.text
    assert answer.json()["field"] == field
    assert await event_count(runtime) == 0


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (b'{"items":[{"rating":5,"rating":1}]}', "rating"),
        (b'{"items":[{"rating":NaN}]}', "body"),
        (b'{"items":' + b"[" * 100 + b"]" * 100 + b"}", "body"),
    ],
)
async def test_the_batch_body_is_read_as_strictly_as_a_single_one(
    client: httpx.AsyncClient, runtime: Runtime, raw: bytes, field: str
) -> None:
    """Duplicate keys, NaN and depth are refused before anything is decided."""
    answer = await client.post(BATCH, content=raw)
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field
    assert await event_count(runtime) == 0


async def test_a_body_over_the_batch_limit_is_a_413(client: httpx.AsyncClient) -> None:
    raw = b'{"items":[' + b",".join([b'{"subjectRef":"' + b"x" * 5000 + b'"}'] * 1000) + b"]}"
    answer = await client.post(BATCH, content=raw)
    assert answer.status_code == 413, answer.text
    assert answer.json()["field"] == "body"


async def test_another_tenant_s_keys_see_nothing(
    client: httpx.AsyncClient, keys: Keys, runtime: Runtime
) -> None:
    """The same item keys from tenant B record B's own feedback, never answer A's."""
    items = [rating(n, idempotencyKey=f"shared-{n}") for n in range(3)]
    mine = answered(await client.post(BATCH, json={"items": items}))
    theirs = answered(
        await client.post(
            BATCH, json={"items": items}, headers={"Authorization": f"Bearer {keys.b}"}
        )
    )
    assert [r["status"] for r in theirs] == [201] * 3
    assert not {r["feedbackId"] for r in mine} & {r["feedbackId"] for r in theirs}
    runtime.start_projections(["feedback_list"])
    listed = await client.get(
        "/factory/feedback",
        params={
            "minPosition": (await client.post(BATCH, json={"items": items})).json()["position"]
        },
    )
    assert {i["feedbackId"] for i in listed.json()["items"]} == {r["feedbackId"] for r in mine}


async def test_a_key_without_the_write_scope_is_refused(
    client: httpx.AsyncClient, keys: Keys
) -> None:
    answer = await client.post(
        BATCH,
        json={"items": [rating(1)]},
        headers={"Authorization": f"Bearer {keys.a_read_only}"},
    )
    assert answer.status_code == 403, answer.text
