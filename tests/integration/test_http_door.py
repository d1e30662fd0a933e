"""The HTTP door: what a client can send that the service must refuse with a 4xx and
the one error shape, never a 5xx, and never storing anything. In-process (the ASGI app) on a
real PostgreSQL."""

import time
import uuid
from typing import Any

import httpx
import pytest

from services.processes.bootstrap import Runtime
from tests.conftest import Keys, event_count, maintain
from tests.unit.test_wrong_answer import SEED_FACTS

FEEDBACK = {"projectId": "p", "subjectKind": "run", "subjectRef": "run-1", "kind": "rating"}


def refused(answer: httpx.Response, status: int, field: str | None = None) -> dict[str, Any]:
    """The answer is ``status`` with the one error shape, naming ``field`` if given."""
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = answer.json()
    assert {"error", "message", "field", "problems"} <= body.keys(), body
    assert isinstance(body["problems"], list)
    if field is not None:
        assert body.get("field") == field, body
    return body


def nested(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


# An id no one has, the same in every collection of the tests: pytest-xdist's workers each
# collect them and must agree (D300); a fresh database holds it no more than a random one.
NOBODYS = uuid.UUID(int=0xF00D)

WRITE_ROUTES = [
    "/factory/feedback",
    "/factory/reports",
    "/factory/reports/wrong-answer",
    f"/factory/reports/{NOBODYS}/review",
    "/factory/evals/cases",
    f"/factory/evals/cases/{NOBODYS}/confirm",
    f"/factory/evals/cases/{NOBODYS}/runs",
]


@pytest.mark.parametrize("route", WRITE_ROUTES)
async def test_json_nested_a_thousand_deep_is_refused_on_every_json_route(
    client: httpx.AsyncClient, runtime: Runtime, route: str
) -> None:
    """The depth is bounded before parsing, so deep nesting is a 422, never a RecursionError."""
    for body in (nested(1000), b"[" * 1000 + b"]" * 1000):
        answer = await client.post(route, content=body)
        refused(answer, 422, "body")
    answer = await client.patch(f"/factory/evals/cases/{uuid.uuid4()}", content=nested(1000))
    refused(answer, 422, "body")
    assert await event_count(runtime) == 0


async def test_brackets_inside_strings_do_not_count_as_nesting(client: httpx.AsyncClient) -> None:
    """Only structure counts towards the depth bound."""
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
    """PostgreSQL text cannot hold NUL: it is refused at the door, not by the query."""
    refused(await client.get(route), 422, parameter)


@pytest.mark.parametrize("route", ["/factory/feedback", "/factory/reports/inbox"])
async def test_a_cursor_beyond_64_bits_is_refused(
    client: httpx.AsyncClient, runtime: Runtime, keys: Keys, route: str
) -> None:
    """A cursor is a token of the tenant like a position, so ``before`` as a number of any
    size (past a bigint included) is refused."""
    refused(await client.get(route, params={"before": 2**64}), 422, "before")
    refused(await client.get(route, params={"before": 2**63 - 1}), 422, "before")
    cursor = runtime.positions.seal(2**63 - 1, tenant_of(runtime, keys.a))
    assert (await client.get(route, params={"before": cursor})).status_code == 200


@pytest.mark.parametrize(
    ("route", "body", "key"),
    [
        ("/factory/feedback", b'{"rating":5,"rating":1}', "rating"),
        (
            f"/factory/reports/{NOBODYS}/review",
            b'{"status":"New","status":"Triaged"}',
            "status",
        ),
        (
            f"/factory/evals/cases/{NOBODYS}/confirm",
            b'{"confirmed":1,"confirmed":0}',
            "confirmed",
        ),
    ],
)
async def test_a_duplicate_key_in_a_json_object_is_refused_naming_it(
    client: httpx.AsyncClient, runtime: Runtime, route: str, body: bytes, key: str
) -> None:
    """Which duplicate would win is the parser's accident, so neither does."""
    refused(await client.post(route, content=body), 422, key)
    assert await event_count(runtime) == 0


@pytest.mark.parametrize(
    ("field", "value"),
    [("rating", True), ("rating", "3"), ("rating", 4.0), ("subjectRef", 7), ("kind", None)],
)
async def test_feedback_types_are_not_coerced(
    client: httpx.AsyncClient, runtime: Runtime, field: str, value: object
) -> None:
    """STYLE 12: JSON types as published; ``true`` is not rating 1."""
    answer = await client.post("/factory/feedback", json={**FEEDBACK, "rating": 4, field: value})
    refused(answer, 422, field)
    assert await event_count(runtime) == 0


async def test_a_boolean_is_not_read_from_a_number(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """``evidence.readable: 0`` is not false, nor ``confirmed: 1`` true."""
    body = {**WRONG_ANSWER, "evidence": {"node": "n", "readable": 0}}
    refused(await client.post("/factory/reports/wrong-answer", json=body), 422, "evidence.readable")
    answer = await client.post(
        f"/factory/evals/cases/{uuid.uuid4()}/confirm", json={"confirmed": 1}
    )
    refused(answer, 422, "confirmed")
    assert await event_count(runtime) == 0


WRONG_ANSWER = {
    "thread": "t-1",
    "messageRef": "m-2",
    "reply": {"agentName": "Office/Agent/Coach", "modelName": "m"},
    "account": "It said the course does not exist.",
}


@pytest.mark.parametrize(
    ("route", "body", "other"),
    [
        ("/factory/reports", {"category": "praise", "message": "nice"}, {"message": "meh"}),
        ("/factory/reports/wrong-answer", WRONG_ANSWER, {"account": "Something else."}),
    ],
)
async def test_a_report_idempotency_key_replays_with_200_and_conflicts_with_another_body(
    client: httpx.AsyncClient,
    runtime: Runtime,
    route: str,
    body: dict[str, Any],
    other: dict[str, Any],
) -> None:
    """SPEC C11: every write route behaves as feedback does; another body under a used key
    is a conflict, never an answer with the first report and the new content dropped."""
    key = {"Idempotency-Key": f"k-{uuid.uuid4()}"}
    first = await client.post(route, json=body, headers=key)
    assert first.status_code == 201, first.text
    count = await event_count(runtime)
    again = await client.post(route, json=body, headers=key)
    assert again.status_code == 200, again.text
    assert again.json()["reportId"] == first.json()["reportId"]
    refused(await client.post(route, json={**body, **other}, headers=key), 409)
    assert await event_count(runtime) == count


@pytest.mark.parametrize("route", ["/factory/feedback", "/factory/reports"])
async def test_an_empty_idempotency_key_is_refused(
    client: httpx.AsyncClient, runtime: Runtime, route: str
) -> None:
    """An empty key is not read as no key (which would make a new command of each retry)."""
    body = {**FEEDBACK, "rating": 4} if route == "/factory/feedback" else {"category": "idea"}
    answer = await client.post(route, json=body, headers={"Idempotency-Key": ""})
    refused(answer, 422, "Idempotency-Key")
    assert await event_count(runtime) == 0


async def draft_and_submit(client: httpx.AsyncClient, category: str = "answer") -> str:
    drafted = await client.post("/factory/reports", json={"category": category, "message": "m"})
    assert drafted.status_code == 201, drafted.text
    report_id: str = drafted.json()["reportId"]
    submitted = await client.post(f"/factory/reports/{report_id}/submit")
    assert submitted.status_code == 200, submitted.text
    return report_id


async def test_submit_and_lift_refuse_a_body(client: httpx.AsyncClient, runtime: Runtime) -> None:
    """SPEC W73: a route without a body refuses one rather than ignore it; ``/lift`` with
    ``{"confirmedBy": "mallory"}`` must not be accepted."""
    drafted = await client.post("/factory/reports", json={"category": "answer", "message": "m"})
    report_id = drafted.json()["reportId"]
    count = await event_count(runtime)
    refused(await client.post(f"/factory/reports/{report_id}/submit", json={}), 422, "body")
    lift = await client.post(f"/factory/reports/{report_id}/lift", json={"confirmedBy": "mallory"})
    refused(lift, 422, "body")
    assert await event_count(runtime) == count


async def test_resolved_needs_a_change_or_a_link(
    client: httpx.AsyncClient, runtime: Runtime, keys: Keys
) -> None:
    """A Resolved report says what changed (docs/reports.md); reviewed by another person than
    its reporter (decisions D24)."""
    report_id = await draft_and_submit(client)
    review = f"/factory/reports/{report_id}/review"
    anna = {"Authorization": f"Bearer {keys.a_other}"}
    assert (await client.post(review, json={"status": "Triaged"}, headers=anna)).status_code == 200
    count = await event_count(runtime)
    for body in ({"status": "Resolved"}, {"status": "Resolved", "change": "  "}):
        refused(await client.post(review, json=body, headers=anna), 422, "change")
    assert await event_count(runtime) == count
    link = {"status": "Resolved", "link": "https://example.org/change/1"}
    assert (await client.post(review, json=link, headers=anna)).status_code == 200


def tenant_of(runtime: Runtime, key: str) -> str:
    principal = runtime.keys.identify(key)
    assert principal is not None
    return principal.tenant_id


async def test_a_min_position_past_the_head_is_refused_at_once(
    client: httpx.AsyncClient, runtime: Runtime, keys: Keys
) -> None:
    """A position that cannot exist yet is refused at once, not held for the whole wait."""
    token = runtime.positions.seal(10**12, tenant_of(runtime, keys.a))
    started = time.monotonic()
    answer = await client.get("/factory/feedback", params={"minPosition": token})
    refused(answer, 422, "minPosition")
    assert time.monotonic() - started < 2


async def test_positions_are_opaque_tokens_of_one_tenant(
    client: httpx.AsyncClient, runtime: Runtime, keys: Keys
) -> None:
    """A global position would tell a tenant how much the others wrote; a token reveals
    nothing, and one of another tenant or tampered with is refused."""
    runtime.start_projections()
    written = await client.post("/factory/feedback", json={**FEEDBACK, "rating": 4})
    token = written.json()["position"]
    assert isinstance(token, str)
    assert not token.isdigit()
    again = await client.post("/factory/feedback", json={**FEEDBACK, "rating": 3})
    assert again.json()["position"] != token
    read = await client.get("/factory/feedback", params={"minPosition": token})
    assert read.status_code == 200, read.text
    assert len(read.json()["items"]) >= 1
    other = {"Authorization": f"Bearer {keys.b}"}
    refused(
        await client.get("/factory/feedback", params={"minPosition": token}, headers=other),
        422,
        "minPosition",
    )
    tampered = token[:-2] + ("AA" if token[-2:] != "AA" else "BB")
    for bad in (tampered, "1", "not a token"):
        answer = await client.get("/factory/feedback", params={"minPosition": bad})
        refused(answer, 422, "minPosition")


async def test_not_yet_visible_says_nothing_of_the_log(runtime: Runtime, keys: Keys) -> None:
    """The 503 names no global position of the read model."""
    runtime.settings = runtime.settings.model_copy(update={"read_wait_seconds": 0.3})
    transport = httpx.ASGITransport(app=runtime.app())
    headers = {"Authorization": f"Bearer {keys.a}"}
    async with httpx.AsyncClient(
        transport=transport, base_url="http://test", headers=headers
    ) as http:
        written = await http.post("/factory/feedback", json={**FEEDBACK, "rating": 4})
        token = written.json()["position"]
        answer = await http.get("/factory/feedback", params={"minPosition": token})
    body = refused(answer, 503)
    assert body["error"] == "not-yet-visible"
    assert "position" not in body
    assert not any(ch.isdigit() for ch in body["message"])
    assert answer.headers["retry-after"] == "1"


async def test_an_unknown_route_answers_the_error_shape(client: httpx.AsyncClient) -> None:
    """One error shape everywhere, Starlette's 404 included."""
    body = refused(await client.get("/factory/nothing-here"), 404)
    assert body["error"] == "not-found"


@pytest.mark.parametrize(
    ("method", "route"),
    [
        ("GET", "/factory/reports/wrong-answer"),
        ("DELETE", "/factory/feedback"),
        ("PUT", f"/factory/reports/{NOBODYS}"),
        ("GET", f"/factory/evals/cases/{NOBODYS}/confirm"),
    ],
)
async def test_a_wrong_method_is_405_not_422(
    client: httpx.AsyncClient, method: str, route: str
) -> None:
    """``GET /factory/reports/wrong-answer`` is a wrong method, not a report id (422)."""
    answer = await client.request(method, route)
    body = refused(answer, 405)
    assert body["error"] == "method-not-allowed"
    assert answer.headers["allow"]


@pytest.mark.parametrize(
    ("route", "field"),
    [
        ("/factory/feedback?limit=0", "limit"),
        ("/factory/feedback?subjectKind=planet", "subjectKind"),
        ("/factory/reports/inbox?submittedBefore=yesterday", "submittedBefore"),
        ("/factory/reports/inbox?submittedAfter=0.7", "submittedAfter"),
        ("/factory/reports/inbox?submittedAfter=2026-11-30", "submittedAfter"),
        # Past year 9999 in UTC (found by attacking the API).
        (
            "/factory/reports/inbox?submittedBefore=9999-12-31T23:59:59.999999-23:59",
            "submittedBefore",
        ),
        (f"/factory/evals/cases/{NOBODYS}/runs/{NOBODYS}/threads/-1", "index"),
    ],
)
async def test_invalid_query_and_path_parameters_answer_the_error_shape(
    client: httpx.AsyncClient, route: str, field: str
) -> None:
    """Parameters are named in ``field`` and listed in ``problems``."""
    body = refused(await client.get(route), 422, field)
    assert body["problems"][0]["field"] == field


async def test_keys_and_scopes_answer_the_error_shape(
    client: httpx.AsyncClient, keys: Keys
) -> None:
    """401 and 403 carry the same fields as every other error."""
    refused(await client.get("/factory/feedback", headers={"Authorization": "Bearer nope"}), 401)
    no_scope = {"Authorization": f"Bearer {keys.a_no_scope}"}
    body = refused(await client.get("/factory/feedback", headers=no_scope), 403)
    assert body["scope"] == "factory.feedback.read"


async def test_a_body_over_the_limit_is_413(client: httpx.AsyncClient, runtime: Runtime) -> None:
    """Too large is its own status, in the error shape."""
    body = {**FEEDBACK, "rating": 4, "subjectRef": "x" * 70_000}
    refused(await client.post("/factory/feedback", json=body), 413, "body")
    assert await event_count(runtime) == 0


async def test_an_unexpected_failure_answers_500_in_the_error_shape(
    runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    """A failure nobody foresaw still answers JSON, not text."""
    app = runtime.app()

    async def broken() -> None:
        raise RuntimeError("a bug")

    # Under /factory: any other path is the console's, whose failure is a page (D121).
    app.add_api_route("/factory/broken", broken)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        body = refused(await http.get("/factory/broken"), 500)
    assert body["error"] == "internal"
    assert "a bug" not in body["message"]
    assert "GET /factory/broken failed" in caplog.text


BODIES = {
    ("post", "/factory/feedback"): "RecordFeedback",
    ("post", "/factory/feedback:batch"): "RecordFeedbackBatch",
    ("post", "/factory/reports"): "DraftReport",
    ("post", "/factory/reports/wrong-answer"): "ComposeWrongAnswer",
    ("post", "/factory/reports/{report_id}/review"): "ReviewReport",
    ("post", "/factory/evals/cases"): "LiftEvalCase",
    ("patch", "/factory/evals/cases/{case_id}"): "PatchEvalCase",
    ("post", "/factory/evals/cases/{case_id}/confirm"): "ConfirmEvalCase",
    ("post", "/factory/evals/cases/{case_id}/runs"): "RunEvalCase",
    ("post", "/factory/learning/proposals/{proposal_id}/decide"): "DecideProposal",
    ("post", "/factory/learning/proposals/{proposal_id}/release"): "RecordRelease",
    ("post", "/factory/evaluation/datasets/{datasetId}/tasks"): "CurateTask",
    ("post", "/factory/evaluation/datasets/{datasetId}/snapshot"): "SnapshotDataset",
    ("post", "/factory/evaluation/datasets/{datasetId}/consents"): "RecordShareConsent",
    ("post", "/factory/evaluation/datasets/{datasetId}/versions/{version}/shares"): "ShareVersion",
    ("post", "/factory/keys"): "NewApiKey",
    ("post", "/factory/roles/grant"): "GrantRole",
    ("post", "/factory/roles/revoke"): "RevokeRole",
    ("post", "/factory/console-sessions/end"): "EndConsoleSessions",
    ("put", "/factory/agents/{agent}"): "RegisterAgent",
    ("put", "/factory/agents/{agent}/webhook"): "SetAgentWebhook",  # D190
    ("post", "/factory/appraisal/outcomes"): "RecordOwnerOutcome",
    ("post", "/factory/reports/{report_id}/kind"): "CorrectKind",
    ("post", "/factory/reports/{report_id}/tags"): "TagReport",
    ("post", "/factory/reports/{report_id}/notes"): "NoteReport",
    ("post", "/factory/evals/comparisons"): "StartComparison",
    ("put", "/factory/queues/{queue}"): "DefineQueue",  # D160
    ("put", "/factory/reports/{report_id}/claim"): "ClaimGiven",  # D163
    ("post", "/factory/widget/tokens"): "MintWidgetToken",  # D230
    ("post", "/factory/widget/feedback"): "WidgetFeedback",  # D236
}
RAW = {("post", "/factory/artifacts"), ("put", "/factory/appraisal/charter")}  # bytes as they come
CLOUDEVENTS = {("post", "/factory/events")}  # a structured CloudEvent, as on Kafka
# Bytes as they were stored: an artifact, a dataset version's snapshot.
STORED = ("/factory/artifacts/", "/factory/evaluation/datasets/{datasetId}/versions/{version}")
# A list's rows as a file, CSV or JSON Lines (decisions D210).
EXPORTS = (
    "/factory/feedback/export",
    "/factory/reports/inbox/export",
    "/factory/evals/runs/export",
)


async def test_the_openapi_document_declares_bodies_answers_and_errors(
    client: httpx.AsyncClient,
) -> None:
    """Every request body, every response model (no untyped object) and
    every error status a route can answer, with examples."""
    document = (await client.get("/openapi.json")).json()
    schemas = document["components"]["schemas"]
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            name = BODIES.get((method, path))
            if name is not None:
                content = operation["requestBody"]["content"]["application/json"]
                assert content["schema"]["$ref"] == f"#/components/schemas/{name}"
                assert content["example"]
                assert name in schemas
            elif (method, path) in RAW:  # the charter is TOML, an artifact any bytes (D140)
                declared = operation["requestBody"]["content"]
                assert declared.keys() & {"application/octet-stream", "application/toml"}
            elif (method, path) in CLOUDEVENTS:
                assert "application/cloudevents+json" in operation["requestBody"]["content"]
            else:
                assert "requestBody" not in operation, (method, path)
            success = [s for s in operation["responses"] if s.startswith("2")]
            for status in success:
                if path.startswith(STORED):
                    continue  # as stored: bytes of their own media type
                if path in EXPORTS:
                    declared = operation["responses"][status]["content"]
                    assert declared.keys() == {"text/csv", "application/jsonl"}, path
                    continue
                schema = operation["responses"][status]["content"]["application/json"]["schema"]
                assert "$ref" in schema, (method, path, status)
            expected = {"401", "403", "404", "422"} | (
                {"409", "413"} if method != "get" else {"503"}
            )
            assert expected <= operation["responses"].keys(), (method, path)
            for status in expected:
                answer = operation["responses"][status]["content"]["application/json"]
                assert answer["schema"]["$ref"] == "#/components/schemas/ErrorBody"
                assert {"error", "message", "field", "problems"} <= answer["example"].keys()


@pytest.mark.parametrize(
    "route",
    [
        "/factory/feedback?subjectref=x",
        "/factory/reports/inbox?agnet=a",
        "/factory/reports/inbox?addressee=a&addressee=b",
    ],
)
async def test_an_unknown_query_parameter_is_refused_naming_it(
    client: httpx.AsyncClient, route: str
) -> None:
    """STYLE 12: a misspelt filter is refused, not ignored (which would answer everything),
    and so is a parameter given twice, rather than one of them dropped silently."""
    refused(await client.get(route), 422, route.split("?")[1].split("=")[0])


async def test_list_positions_and_cursors_are_tokens_of_the_tenant(
    client: httpx.AsyncClient, runtime: Runtime, keys: Keys
) -> None:
    """Each item's position and the ``next`` cursor are tokens of the tenant, not global."""
    runtime.start_projections()
    for rating in (1, 2, 3):
        written = await client.post("/factory/feedback", json={**FEEDBACK, "rating": rating})
    token = written.json()["position"]
    first = await client.get("/factory/feedback", params={"minPosition": token, "limit": 2})
    assert first.status_code == 200, first.text
    page = first.json()
    assert all(isinstance(item["position"], str) for item in page["items"])
    assert [item["rating"] for item in page["items"]] == [3, 2]
    second = await client.get("/factory/feedback", params={"before": page["next"], "limit": 2})
    assert [item["rating"] for item in second.json()["items"]] == [1]
    other = {"Authorization": f"Bearer {keys.b}"}
    answer = await client.get("/factory/feedback", params={"before": page["next"]}, headers=other)
    refused(answer, 422, "before")


async def test_submit_review_patch_and_confirm_repeat_by_idempotency_key_as_feedback_does(
    client: httpx.AsyncClient, runtime: Runtime, keys: Keys
) -> None:
    """SPEC C11: every write route behaves as feedback does. A review, submit, patch or
    confirm retried after a lost answer is not decided again (a second review would be a 409
    invalid-transition). With an Idempotency-Key, the same request answers what the report or
    case shows now and appends nothing; another request under the key is a 409."""
    facts = {**SEED_FACTS, "prompt": "Welchen Stundenansatz verrechne ich?"}
    draft = (await client.post("/factory/reports/wrong-answer", json=facts)).json()
    report = f"/factory/reports/{draft['reportId']}"
    steps: list[tuple[str, str, dict[str, Any] | None, dict[str, Any] | None]] = [
        ("post", f"{report}/submit", None, None),
    ]
    for method, route, body, other in steps:
        await repeats_by_key(client, runtime, method, route, body, other)
    lifted = await client.post(f"{report}/lift")
    assert lifted.status_code == 201, lifted.text
    case = f"/factory/evals/cases/{lifted.json()['caseId']}"
    # Reviewed by another person than its reporter (decisions D24).
    anna = {"Authorization": f"Bearer {keys.a_other}"}
    await repeats_by_key(
        client, runtime, "post", f"{report}/review", {"status": "Triaged"}, {"status": "WontFix"},
        anna,
    )  # fmt: skip
    await maintain(client, keys.a)  # alice patches and confirms as its maintainer (D77)
    steps = [
        ("patch", case, {"mustAssert": "CHF 150"}, {"mustAssert": "CHF 160"}),
        ("post", f"{case}/confirm", {"confirmed": True}, {"confirmed": False}),
    ]
    for method, route, body, other in steps:
        await repeats_by_key(client, runtime, method, route, body, other)


async def repeats_by_key(
    client: httpx.AsyncClient,
    runtime: Runtime,
    method: str,
    route: str,
    body: dict[str, Any] | None,
    other: dict[str, Any] | None,
    caller: dict[str, str] | None = None,
) -> None:
    key = {"Idempotency-Key": f"k-{uuid.uuid4()}", **(caller or {})}
    first = await client.request(method, route, json=body, headers=key)
    assert first.status_code in (200, 201), (route, first.text)
    count = await event_count(runtime)
    again = await client.request(method, route, json=body, headers=key)
    assert again.status_code in (200, 201), (route, again.text)
    shown = {k: v for k, v in again.json().items() if k != "position"}
    assert shown == {k: v for k, v in first.json().items() if k != "position"}, route
    assert await event_count(runtime) == count, route  # nothing decided again
    if other is not None:
        refused(await client.request(method, route, json=other, headers=key), 409)
        assert await event_count(runtime) == count, route


async def test_a_body_past_what_any_route_reads_is_413_on_a_route_with_a_smaller_bound(
    client: httpx.AsyncClient,
) -> None:
    """Found by attacking the API: the artifact route read a 400 MiB body whole before its
    own 1 MiB bound refused it. A body past the most any route reads (a batch's 4 MiB) is
    refused as it arrives, on every route."""
    refused(await client.post("/factory/artifacts", content=b"x" * (5 * 1024 * 1024)), 413, "body")
    # Over the artifact's own bound (1 MiB), under the most any route reads: 413 as well.
    refused(await client.post("/factory/artifacts", content=b"x" * (1024 * 1024 + 1)), 413, "body")


@pytest.mark.parametrize("path", ["/factory/feedback", "/factory/feedback:batch"])
async def test_a_key_or_idempotency_key_given_twice_is_refused_naming_the_header(
    client: httpx.AsyncClient, keys: Keys, runtime: Runtime, path: str
) -> None:
    """Found by attacking the API: the first of two was taken, whichever tenant it named."""
    body = {"projectId": "p", "subjectKind": "run", "subjectRef": "r", "kind": "escalation"}
    sent = {"items": [body]} if path.endswith(":batch") else body
    before = await event_count(runtime)
    twice = [("Authorization", f"Bearer {keys.b}"), ("Authorization", f"Bearer {keys.a}")]
    refused(await client.post(path, json=sent, headers=twice), 422, "Authorization")
    keyed = [("Idempotency-Key", "k-1"), ("Idempotency-Key", "k-2")]
    refused(await client.post(path, json=sent, headers=keyed), 422, "Idempotency-Key")
    assert await event_count(runtime) == before
    assert (await client.post(path, json=sent, headers={"Idempotency-Key": "k-1"})).is_success


async def test_a_trailing_slash_is_no_route_and_answers_the_error_shape(
    client: httpx.AsyncClient,
) -> None:
    """Found by attacking the API: it answered 307 with an empty body."""
    refused(await client.get("/factory/feedback/"), 404)
    refused(await client.post("/factory/feedback/", json={}), 404)


async def test_a_read_with_its_last_name_left_out_is_no_route(client: httpx.AsyncClient) -> None:
    """``GET /factory/appraisal/agents/`` answered 422 naming ``agent``: a ``{agent:path}``
    matched the empty name. Every read whose path ends in a name (as the OpenAPI document
    lists them), asked with the name left out, is 404 in the error shape, as any trailing
    slash is: ``{…:name}`` (``services.edge.parameters``) takes at least one character."""
    document = (await client.get("/openapi.json")).json()
    ending_in_a_name = [
        path
        for path, methods in document["paths"].items()
        if "get" in methods and path.endswith("}")
    ]
    assert "/factory/appraisal/agents/{agent}" in ending_in_a_name
    for path in ending_in_a_name:
        left_out = path[: path.rindex("{")]
        answer = await client.get(left_out)
        assert answer.status_code == 404, (left_out, answer.status_code, answer.text)
        refused(answer, 404)
