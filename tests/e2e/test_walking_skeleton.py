"""The running service, driven as its users and its neighbour services drive it.

The service runs as its own process (``feedbackloop serve``) on a real PostgreSQL and a real
Kafka broker; the neighbour is plain aiokafka, none of the project's code.
"""

import json
from typing import Any

import httpx
import pytest

from tests.conftest import Keys
from tests.e2e.conftest import Service, auth, listed
from tests.kafka_peer import consume, produce, record_feedback_event

BODY = {
    "projectId": "p1",
    "subjectKind": "run",
    "subjectRef": "run-7",
    "kind": "rating",
    "rating": 2,
}


async def feedback(http: httpx.AsyncClient, key: str, count: int, **params: Any) -> list[Any]:
    return await listed(http, "/factory/feedback", key, count, **params)


async def test_http_and_kafka_commands_each_land_exactly_one_event(
    service: Service, http: httpx.AsyncClient, keys: Keys, kafka_bootstrap: str
) -> None:
    # A user over HTTP …
    created = await http.post("/factory/feedback", json=BODY, headers=auth(keys.a))
    assert created.status_code == 201, created.text
    position = created.json()["position"]
    mine = await http.get(
        "/factory/feedback",
        params={"minPosition": position, "subjectRef": "run-7"},
        headers=auth(keys.a),
    )
    assert [i["feedbackId"] for i in mine.json()["items"]] == [created.json()["feedbackId"]]

    # … and a neighbour service over Kafka, sending the same command as a CloudEvent.
    tenant = (await http.get("/factory/feedback", headers=auth(keys.a))).json()["items"][0][
        "tenantId"
    ]
    command = record_feedback_event(
        tenant, "svc-neighbour", {**BODY, "kind": "escalation", "rating": None}
    )
    command_topic = service.prefix + "evaluation.feedback.v1.record-feedback"
    await produce(kafka_bootstrap, command_topic, [command])
    items = await feedback(http, keys.a, 2, subjectRef="run-7")
    assert sorted(i["givenBy"] for i in items) == ["alice", "svc-neighbour"]

    # The neighbour reads both integration events with a consumer group of its own.
    recorded_topic = service.prefix + "evaluation.feedback.v1.feedback-recorded"
    published = await consume(kafka_bootstrap, recorded_topic, 2)
    envelopes = [json.loads(m.value) for m in published]
    assert sorted(e["data"]["feedbackId"] for e in envelopes) == sorted(
        i["feedbackId"] for i in items
    )
    assert {e["type"] for e in envelopes} == {"evaluation.feedback.v1.FeedbackRecorded"}
    # Exactly one event per command: nothing else arrives.
    assert len(await consume(kafka_bootstrap, recorded_topic, 3, timeout=3)) == 2
    # Tenant B sees none of tenant A's feedback (SPEC C51).
    other = await http.get("/factory/feedback", headers=auth(keys.b))
    assert other.json()["items"] == []


async def test_the_idempotency_key_answers_the_same_feedback_once(
    http: httpx.AsyncClient, keys: Keys
) -> None:
    headers = {**auth(keys.a), "Idempotency-Key": "order-1"}
    first = await http.post("/factory/feedback", json=BODY, headers=headers)
    again = await http.post("/factory/feedback", json=BODY, headers=headers)
    changed = await http.post("/factory/feedback", json={**BODY, "rating": 5}, headers=headers)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["feedbackId"] == first.json()["feedbackId"]
    assert changed.status_code == 409
    assert changed.json()["error"] == "conflict"
    items = await feedback(http, keys.a, 1)
    assert len(items) == 1


@pytest.mark.parametrize("field", ["tenantId", "givenBy"])
async def test_a_body_bringing_a_stamped_field_is_refused_and_nothing_stored(
    http: httpx.AsyncClient, keys: Keys, field: str
) -> None:
    response = await http.post(
        "/factory/feedback", json={**BODY, field: "mallory"}, headers=auth(keys.a)
    )
    assert response.status_code == 422
    assert response.json()["field"] == field
    assert (await http.get("/factory/feedback", headers=auth(keys.a))).json()["items"] == []


async def test_keys_and_scopes_guard_every_route(http: httpx.AsyncClient, keys: Keys) -> None:
    assert (await http.post("/factory/feedback", json=BODY)).status_code == 401
    assert (await http.get("/factory/feedback", headers=auth("fl_unknown"))).status_code == 401
    forbidden = await http.post("/factory/feedback", json=BODY, headers=auth(keys.a_read_only))
    assert forbidden.status_code == 403
    assert forbidden.json()["scope"] == "factory.feedback.write"
    assert (await http.get("/factory/feedback", headers=auth(keys.a_no_scope))).status_code == 403


async def test_bad_bodies_get_a_4xx_naming_the_problem(http: httpx.AsyncClient, keys: Keys) -> None:
    cases = [
        (b"{not json", "body", 422),
        (b"[]", "body", 422),
        (json.dumps({**BODY, "subjectKind": "planet"}).encode(), "subjectKind", 422),
        (json.dumps({**BODY, "rating": None}).encode(), "rating", 422),
        (json.dumps({**BODY, "subjectRef": "x" * 600}).encode(), "subjectRef", 422),
        (b'{"projectId": "' + b"x" * 70_000 + b'"}', "body", 413),  # too large
    ]
    for raw, field, status in cases:
        response = await http.post(
            "/factory/feedback",
            content=raw,
            headers={**auth(keys.a), "Content-Type": "application/json"},
        )
        assert response.status_code == status, (field, response.text)
        assert response.json()["field"] == field
    assert (await http.get("/factory/feedback", headers=auth(keys.a))).json()["items"] == []
