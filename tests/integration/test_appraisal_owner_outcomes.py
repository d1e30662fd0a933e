"""Owner outcomes, drafts, questions and stops on a real PostgreSQL (SPEC M30–M33): the
runtime's facts through ``POST /factory/events`` (read tolerantly, as on Kafka), an outcome
recorded by hand, and the read model rebuilt — under a changed table it reads anew, under the
same table the owner outcomes replay into the same readings."""

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from projections.appraisal import AppraisalFacts
from services.appraisal.api import appraisal_routes
from services.appraisal.outcomes import CONTRIBUTIONS, Agency, Channel, Contribution
from services.edge.app import create_app
from services.edge.http import Http
from services.processes.bootstrap import Runtime
from services.projecting.live import ProjectionRunner
from services.projecting.rebuild import rebuild
from tests.conftest import Keys, event_count

DOOR = "/factory/events"
CE = {"Content-Type": "application/cloudevents+json"}
AT = datetime.now(UTC) - timedelta(hours=1)


def cloudevent(event_id: str, type_: str, data: dict[str, Any]) -> bytes:
    return json.dumps(
        {"specversion": "1.0", "id": event_id, "source": "urn:agents", "type": type_,
         "data": data}
    ).encode()  # fmt: skip


def run_completed(run_id: str, at: datetime, **data: Any) -> bytes:
    body = {
        "runId": run_id,
        "agentId": "coach",
        "outcome": "succeeded",
        "inputRef": "urn:in:1",
        "completedAt": at.isoformat(),
        "counters": {},
        "aFieldWeDoNotKnow": 1,
        **data,
    }
    return cloudevent(f"run/{run_id}", "factory.runs.v1.RunCompleted", body)  # fmt: skip


def owner_outcome(outcome_id: str, draft_id: str, verdict: str, **data: Any) -> bytes:
    body = {
        "outcomeId": outcome_id,
        "runId": "run-1",
        "draftId": draft_id,
        "verdict": verdict,
        "recordedAt": AT.isoformat(),
        "theirOwnField": "kept and ignored",
        **data,
    }
    kind = "factory.agents.v1.OwnerOutcomeRecorded"
    return cloudevent(f"oc/{outcome_id}", kind, body)


async def post(client: httpx.AsyncClient, raw: bytes) -> httpx.Response:
    return await client.post(DOOR, content=raw, headers=CE)


async def caught_up(runtime: Runtime) -> None:
    runner = ProjectionRunner(runtime.store, runtime.pool, AppraisalFacts())
    await runner.start()
    await runner.catch_up()


async def a_run_with_drafts(client: httpx.AsyncClient) -> None:
    """Run 1: three drafts (sent unchanged, pending, rejected), a parked and an answered
    question, an owner stop it was re-prompted after, a shutdown; run 2 resumes it and reports
    the same stop and the first draft again (counted once, M31)."""
    items = {
        "drafts": [{"draftId": "d-sent", "status": "sent_unchanged"},
                   {"draftId": "d-pending", "status": "pending"},
                   {"draftId": "d-rejected", "status": "rejected"}],
        "questions": [{"questionId": "q-parked", "status": "parked"},
                      {"questionId": "q-answered", "status": "answered"}],
        "stops": [{"stopId": "stop-1"}],
        "counters": {"pendingDrafts": 1, "parkedQuestions": 1, "ownerStops": 1, "shutdowns": 1},
    }  # fmt: skip
    assert (await post(client, run_completed("run-1", AT, **items))).status_code == 201
    resumed = {"drafts": [{"draftId": "d-sent", "status": "sent_unchanged"}],
               "stops": [{"stopId": "stop-1", "resumed": True}]}  # fmt: skip
    later = AT + timedelta(minutes=5)
    assert (await post(client, run_completed("run-2", later, **resumed))).status_code == 201


def outcomes_of(body: dict[str, Any]) -> list[tuple[str, str, float]]:
    return sorted((o["outcome"], o["cite"], o["sign"]) for o in body["outcomes"])


async def test_the_runtime_s_items_count_once_and_a_negative_owner_outcome_replaces_the_draft(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    await a_run_with_drafts(client)
    await caught_up(runtime)
    before = (await client.get("/factory/appraisal/agents/coach")).json()
    assert outcomes_of(before) == [  # M30: pending, parked and the shutdown give nothing
        ("draft-rejected", "d-rejected", -1.0),
        ("draft-sent-unchanged", "d-sent", 1.0),
        ("owner-stop-redirect", "stop-1", -0.5),  # M31: once, re-prompted in run 2
        ("question-answered", "q-answered", 0.5),
    ]
    assert before["label"] == "distress"  # M40, M42
    answer = await post(client, owner_outcome("oc-1", "d-sent", "expectation_missed"))
    assert answer.status_code == 201, answer.text
    await caught_up(runtime)
    after = (await client.get("/factory/appraisal/agents/coach")).json()
    replaced = [o for o in outcomes_of(after) if o[1] == "d-sent"]
    assert replaced == [("owner-expectation_missed", "d-sent", -1.0)]  # M32: one −1.0
    assert after["valence"]["shown"] == "+0.5 \u22122.5"


async def test_an_owner_records_an_outcome_by_hand_under_the_same_rules(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    route = "/factory/appraisal/outcomes"
    body = {"outcomeId": "oc-h1", "runId": "run-1", "draftId": "d-1", "verdict": "harm"}
    refused = await client.post(route, json=body)
    assert (refused.status_code, refused.json()["field"]) == (422, "commitment")  # M33
    before = await event_count(runtime)
    unknown = await client.post(route, json={**body, "commitment": "c-1", "mood": "sad"})
    assert unknown.status_code == 422  # strict with ourselves: an unknown field
    assert await event_count(runtime) == before
    first = await client.post(route, json={**body, "commitment": "task:T-9"})
    assert first.status_code == 201, first.text
    assert first.json()["active"] == "oc-h1"
    second = {**body, "outcomeId": "oc-h2", "verdict": "no_issue"}
    clash = await client.post(route, json=second)
    assert (clash.status_code, clash.json()["field"]) == (409, "supersedes")  # one active
    wrong = await client.post(route, json={**second, "supersedes": "oc-x"})
    assert wrong.status_code == 409
    ok = await client.post(route, json={**second, "supersedes": "oc-h1"})
    assert ok.json()["active"] == "oc-h2"
    bare = {**body, "outcomeId": "oc-h3", "verdict": "withdrawn"}
    no_prior = await client.post(route, json=bare)
    assert (no_prior.status_code, no_prior.json()["field"]) == (422, "supersedes")
    gone = await client.post(route, json={**bare, "supersedes": "oc-h2"})
    assert gone.json()["active"] is None


async def test_the_owner_outcome_door_reads_tolerantly_and_refuses_what_breaks_the_rules(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    harm = await post(client, owner_outcome("oc-9", "d-9", "harm"))
    assert harm.status_code == 422, harm.text  # harm without a commitment
    assert harm.json()["field"] == "commitment"
    ok = await post(client, owner_outcome("oc-9", "d-9", "harm", commitment="task:T-1"))
    assert ok.status_code == 201, ok.text
    again = await post(client, owner_outcome("oc-9", "d-9", "harm", commitment="task:T-1"))
    assert again.status_code == 200  # the same message: applied once


@pytest.fixture
async def kinder_client(runtime: Runtime, keys: Keys) -> AsyncIterator[httpx.AsyncClient]:
    """A changed contribution table: a rejected draft is worth −0.5, an owner stop nothing."""
    table = dict(CONTRIBUTIONS)
    table["draft-rejected"] = Contribution(Channel.edit, -0.5, Agency.owner)
    del table["owner-stop-redirect"]
    http = Http(runtime.bus, runtime.pool, runtime.keys, 5, runtime.positions)
    app = create_app(http, [appraisal_routes(http, table)])
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    headers = {"Authorization": f"Bearer {keys.a}"}
    async with httpx.AsyncClient(transport=transport, base_url="http://t", headers=headers) as c:
        yield c


async def test_a_rebuild_replays_owner_outcomes_into_the_same_readings_and_a_new_table_rereads(
    runtime: Runtime, client: httpx.AsyncClient, kinder_client: httpx.AsyncClient
) -> None:
    await a_run_with_drafts(client)
    await post(client, owner_outcome("oc-1", "d-sent", "error_exposed"))
    await post(client, owner_outcome("oc-2", "d-rejected", "no_issue"))
    await post(client, owner_outcome("oc-3", "d-rejected", "withdrawn", supersedes="oc-2"))
    await caught_up(runtime)
    before = (await client.get("/factory/appraisal/agents/coach")).json()
    await rebuild(runtime.store, runtime.pool, AppraisalFacts())
    same = (await client.get("/factory/appraisal/agents/coach")).json()
    assert outcomes_of(same) == outcomes_of(before)
    assert (same["label"], same["valence"]) == (before["label"], before["valence"])
    assert ("owner-error_exposed", "d-sent", -1.0) in outcomes_of(same)
    kinder = (await kinder_client.get("/factory/appraisal/agents/coach")).json()
    assert outcomes_of(kinder) == [
        ("draft-rejected", "d-rejected", -0.5),
        ("owner-error_exposed", "d-sent", -1.0),
        ("question-answered", "q-answered", 0.5),
    ]


async def test_a_sensor_whose_read_model_is_behind_the_position_asked_reads_deferred(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    """SPEC M20: the charter's read model has the write asked for, the Inbox's has not (no
    runner moves it here): request_closure reads deferred, not an old value and not a wait."""
    document = (
        '[[line]]\nid = "closing"\ntext = "Reports close soon."\n'
        'sensor = { kind = "request_closure", setpoint = "2d" }\n'
    )
    written = await client.put("/factory/appraisal/charter", content=document,
                               headers={"Content-Type": "application/toml"})  # fmt: skip
    await caught_up(runtime)
    params = {"minPosition": written.json()["position"]}
    got = (await client.get("/factory/appraisal/charter", params=params)).json()
    assert got["lines"][0]["sensor"]["state"] == "deferred"
    assert got["lines"][0]["sensor"]["value"] is None
    now = (await client.get("/factory/appraisal/charter")).json()
    assert now["lines"][0]["sensor"]["state"] == "nothing-waiting"  # read as it stands
