"""Trace links over the real service (D260–D263): feedback names the trace and span of the
agent's answer it is about; the list answers them, the event keeps them as its trace (preferred
to the request's ``traceparent``), and what the relay publishes carries that trace. A bad id
is a 422 naming the field, and nothing is recorded."""

import json
import uuid
from typing import Any

import httpx
import pytest

from contracts import topics
from projections.feedback_list import list_feedback
from services.feedback.domain import Feedback
from services.observing.tracing import traceparent_of
from services.processes.bootstrap import Runtime
from tests.conftest import Keys, client_for, event_count
from tests.integration.test_list_pages import settled as settled_models
from tests.integration.test_relay import relay_for, run_until_published
from tests.kafka_peer import consume, inbound, produce, record_feedback_event, settled

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN = "00f067aa0ba902b7"
GEN_AI = {"gen_ai.request.model": "gpt-4o", "gen_ai.response.id": "chatcmpl-9x"}


def rating(subject: str, **trace: Any) -> dict[str, Any]:
    return {
        "projectId": "p",
        "subjectKind": "run",
        "subjectRef": subject,
        "kind": "rating",
        "rating": 2,
        **trace,
    }


async def listed(client: httpx.AsyncClient, position: str, subject: str) -> dict[str, Any]:
    answer = await client.get(
        "/factory/feedback", params={"minPosition": position, "subjectRef": subject}
    )
    assert answer.status_code == 200, answer.text
    (item,) = answer.json()["items"]
    return dict(item)


def stored_traceparent(runtime: Runtime, feedback_id: str) -> str | None:
    (recorded,) = runtime.store.events.get(uuid.UUID(feedback_id))
    assert isinstance(recorded, Feedback.Recorded)
    return traceparent_of(recorded)


async def test_feedback_with_a_trace_is_listed_with_it_and_carries_it_as_its_trace(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    runtime.start_projections(["feedback_list"])
    header = f"00-{uuid.uuid4().hex}-{uuid.uuid4().hex[:16]}-01"  # another trace: the body wins
    written = await client.post(
        "/factory/feedback",
        json=rating("traced", traceId=TRACE, spanId=SPAN, genAi=GEN_AI),
        headers={"traceparent": header},
    )
    assert written.status_code == 201, written.text
    item = await listed(client, written.json()["position"], "traced")
    assert (item["traceId"], item["spanId"], item["genAi"]) == (TRACE, SPAN, GEN_AI)
    assert stored_traceparent(runtime, item["feedbackId"]) == f"00-{TRACE}-{SPAN}-01"
    untraced = await client.post("/factory/feedback", json=rating("plain"))
    item = await listed(client, untraced.json()["position"], "plain")
    assert (item["traceId"], item["spanId"], item["genAi"]) == (None, None, None)


@pytest.mark.parametrize(
    ("trace", "field"),
    [
        ({"traceId": TRACE.upper()}, "traceId"),  # W3C ids are lowercase: refused, not folded
        ({"traceId": "0" * 32}, "traceId"),  # all zeros is the invalid id
        ({"traceId": TRACE[:-1]}, "traceId"),
        ({"traceId": TRACE, "spanId": "0" * 16}, "spanId"),
        ({"traceId": TRACE, "spanId": SPAN + "a"}, "spanId"),
        ({"spanId": SPAN}, "traceId"),  # a span without its trace names nothing
        ({"traceId": TRACE, "genAi": {"gen_ai.usage.input_tokens": "5"}}, "genAi"),
        ({"traceId": TRACE, "genAi": {"gen_ai.request.model": "x" * 201}}, "genAi"),
    ],
)
async def test_a_bad_trace_link_is_refused_naming_its_field_and_records_nothing(
    runtime: Runtime, client: httpx.AsyncClient, trace: dict[str, Any], field: str
) -> None:
    before = await event_count(runtime)
    answer = await client.post("/factory/feedback", json=rating("bad", **trace))
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"].startswith(field)
    assert await event_count(runtime) == before


async def test_the_published_feedback_carries_the_trace_its_body_named(
    kafka_runtime: Runtime, kafka_bootstrap: str, keys: Keys
) -> None:
    header = f"00-{uuid.uuid4().hex}-{uuid.uuid4().hex[:16]}-00"
    same_trace = f"00-{TRACE}-{uuid.uuid4().hex[:16]}-00"
    async with client_for(kafka_runtime, keys.a) as client:
        sent = [
            ("body", rating("body", traceId=TRACE, spanId=SPAN), header),
            # A trace id alone makes no traceparent: the request's stays, in that trace or not.
            ("alone", rating("alone", traceId=TRACE), same_trace),
            ("header", rating("header"), header),
        ]
        for _, body, traceparent in sent:
            answer = await client.post(
                "/factory/feedback", json=body, headers={"traceparent": traceparent}
            )
            assert answer.status_code == 201, answer.text
    await run_until_published(kafka_runtime, relay_for(kafka_runtime), 3)
    topic = kafka_runtime.settings.topic_prefix + topics.FEEDBACK_RECORDED
    messages = await consume(kafka_bootstrap, topic, 3)
    traces = {
        json.loads(m.value)["data"]["subjectRef"]: (
            dict(m.headers)["traceparent"].decode(),
            json.loads(m.value)["traceparent"],
        )
        for m in messages
    }
    assert traces == {
        "body": (f"00-{TRACE}-{SPAN}-01", f"00-{TRACE}-{SPAN}-01"),
        "alone": (same_trace, same_trace),
        "header": (header, header),
    }


async def test_a_kafka_command_keeps_its_cloudevent_trace_and_its_body_trace_links(
    kafka_runtime: Runtime, kafka_bootstrap: str, keys: Keys
) -> None:
    await kafka_runtime.ensure_topics()
    kafka_runtime.start_projections(["feedback_list"])
    traceparent = f"00-{uuid.uuid4().hex}-{uuid.uuid4().hex[:16]}-01"
    carried = json.loads(record_feedback_event("tenant-k", "svc", rating("carried")))
    linked = record_feedback_event(
        "tenant-k", "svc", rating("linked", traceId=TRACE, spanId=SPAN, genAi=GEN_AI)
    )
    messages = [json.dumps({**carried, "traceparent": traceparent}).encode(), linked]
    command_topic = kafka_runtime.settings.topic_prefix + topics.RECORD_FEEDBACK
    await produce(kafka_bootstrap, command_topic, messages)
    async with inbound(kafka_runtime) as consumer:
        await settled(consumer, 2)
    assert consumer.applied == 2
    await settled_models(kafka_runtime, "feedback_list")
    page = await list_feedback(kafka_runtime.pool, "tenant-k")
    items = {item["subjectRef"]: item for item in page.items}
    assert (items["linked"]["traceId"], items["linked"]["spanId"]) == (TRACE, SPAN)
    assert items["linked"]["genAi"] == GEN_AI
    assert items["carried"]["traceId"] is None  # the carrier's trace is the event's, not a link
    traces = {
        subject: stored_traceparent(kafka_runtime, item["feedbackId"])
        for subject, item in items.items()
    }
    assert traces == {"carried": traceparent, "linked": f"00-{TRACE}-{SPAN}-01"}


WRONG_ANSWER = {
    "thread": "thread-1",
    "messageRef": "message-2",
    "reply": {"agentName": "Office/Agent/Coach", "modelName": "claude-sonnet-4-5"},
    "account": "It said my course does not exist.",
    "evidence": {"node": "Office/Course/42", "readable": True},
}


async def report_of(client: httpx.AsyncClient, written: httpx.Response) -> dict[str, Any]:
    assert written.status_code == 201, written.text
    body = written.json()
    answer = await client.get(
        f"/factory/reports/{body['reportId']}", params={"minPosition": body["position"]}
    )
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


async def test_a_report_and_a_wrong_answer_keep_the_trace_of_the_reported_answer(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    runtime.start_projections(["inbox"])
    links = {"traceId": TRACE, "spanId": SPAN, "genAi": GEN_AI}
    draft = {"category": "idea", "message": "Export as PDF", **links}
    report = await report_of(client, await client.post("/factory/reports", json=draft))
    assert (report["traceId"], report["spanId"], report["genAi"]) == (TRACE, SPAN, GEN_AI)
    composed = {**WRONG_ANSWER, "traceId": TRACE}
    wrong = await client.post("/factory/reports/wrong-answer", json=composed)
    report = await report_of(client, wrong)
    assert (report["traceId"], report["spanId"], report["genAi"]) == (TRACE, None, None)
    plain = await report_of(client, await client.post("/factory/reports", json=draft | {
        "traceId": None, "spanId": None, "genAi": None, "message": "plain"}))  # fmt: skip
    assert (plain["traceId"], plain["spanId"], plain["genAi"]) == (None, None, None)


@pytest.mark.parametrize("route", ["/factory/reports", "/factory/reports/wrong-answer"])
@pytest.mark.parametrize(
    ("trace", "field"),
    [({"traceId": "0" * 32}, "traceId"), ({"spanId": SPAN}, "traceId"), ({"traceId": TRACE,
      "spanId": "XYZ"}, "spanId")],
)  # fmt: skip
async def test_a_report_with_a_bad_trace_link_is_refused_and_records_nothing(
    runtime: Runtime,
    client: httpx.AsyncClient,
    route: str,
    trace: dict[str, Any],
    field: str,
) -> None:
    before = await event_count(runtime)
    body = {"category": "idea", "message": "m"} if route == "/factory/reports" else WRONG_ANSWER
    answer = await client.post(route, json={**body, **trace})
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field
    assert await event_count(runtime) == before
