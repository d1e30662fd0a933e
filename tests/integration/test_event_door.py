"""Neighbour events over HTTP in the embedded mode: ``POST /factory/events`` reads
a structured CloudEvent as the Kafka consumer does and applies it once by its identity."""

import json
from typing import Any

import httpx
from eventsourcing.utils import get_topic

from services.datasets.domain import HarvestedRun
from services.feedback.domain import Feedback
from services.processes.bootstrap import Runtime
from services.store.event_store import EVENTS_TABLE
from tests.conftest import Keys, event_count

DOOR = "/factory/events"
CE = {"Content-Type": "application/cloudevents+json"}


def run_completed(event_id: str = "e-1", **data: Any) -> dict[str, Any]:
    return {
        "specversion": "1.0",
        "id": event_id,
        "source": "urn:run-control",
        "type": "factory.runs.v1.RunCompleted",
        "data": {
            "runId": "r-1",
            "agentId": "coach",
            "outcome": "succeeded",
            "inputRef": "urn:input:1",
            "completedAt": "2026-11-30T10:00:00Z",
            **data,
        },
    }


async def post(client: httpx.AsyncClient, event: Any, **headers: str) -> httpx.Response:
    return await client.post(DOOR, content=json.dumps(event).encode(), headers={**CE, **headers})


async def count(runtime: Runtime, event_class: type) -> int:
    found = await runtime.pool.fetchval(
        f"SELECT count(*) FROM {EVENTS_TABLE} WHERE topic = $1", get_topic(event_class)
    )
    return int(found)


async def test_a_run_completed_posted_twice_is_harvested_once(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    first = await post(client, run_completed(unknownField=1))
    assert first.status_code == 201, first.text
    assert first.json()["applied"] is True
    again = await post(client, run_completed())
    assert (again.status_code, again.json()["applied"]) == (200, False)
    # Another event id for the same run: a new message, the same run, still one task.
    other = await post(client, run_completed("e-2"))
    assert other.status_code == 201
    assert await count(runtime, HarvestedRun.Harvested) == 1


async def test_a_command_goes_through_the_same_door(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    event = {
        "specversion": "1.0",
        "id": "c-1",
        "source": "urn:svc",
        "type": "evaluation.feedback.v1.RecordFeedback",
        "data": {"projectId": "p", "subjectKind": "run", "subjectRef": "r", "kind": "escalation"},
    }
    assert (await post(client, event)).status_code == 201
    assert await count(runtime, Feedback.Recorded) == 1


async def test_the_tenant_and_actor_are_the_keys(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    before = await event_count(runtime)
    other_tenant = await post(client, {**run_completed(), "tenantid": "someone-else"})
    assert other_tenant.status_code == 403
    assert other_tenant.json()["field"] == "tenantid"
    other_actor = await post(client, {**run_completed(), "actor": "mallory"})
    assert (other_actor.status_code, other_actor.json()["field"]) == (403, "actor")
    own = json.loads(keys.entries)[0]["tenant"]
    assert (await post(client, {**run_completed(), "tenantid": own})).status_code == 201
    assert await event_count(runtime) > before
    reader = {"Authorization": f"Bearer {keys.a_read_only}"}
    assert (await post(client, run_completed("e-9"), **reader)).status_code == 403


async def test_another_tenants_event_under_the_same_source_and_id_is_applied_too(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """Found by attacking the service: tenant B's event kept tenant A's under the same
    ``source`` + ``id`` from being applied, and its 200 told B that A had used them."""
    theirs = await post(client, run_completed("shared"), Authorization=f"Bearer {keys.b}")
    assert (theirs.status_code, theirs.json()["applied"]) == (201, True)
    mine = await post(client, run_completed("shared"))
    assert (mine.status_code, mine.json()["applied"]) == (201, True), mine.text
    again = await post(client, run_completed("shared"))
    assert (again.status_code, again.json()["applied"]) == (200, False)
    assert await count(runtime, HarvestedRun.Harvested) == 2  # one run in each tenant


async def test_bad_input_is_refused_naming_the_field(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    before = await event_count(runtime)
    missing = run_completed()
    del missing["data"]["runId"]
    refused = await post(client, missing)
    assert refused.status_code == 422, refused.text
    assert "run" in refused.json()["field"].lower()
    wrong_type = await post(client, {**run_completed(), "type": "factory.runs.v1.Unknown"})
    assert (wrong_type.status_code, wrong_type.json()["field"]) == (422, "type")
    no_id = {k: v for k, v in run_completed().items() if k != "id"}
    assert (await post(client, no_id)).status_code == 422
    plain = await client.post(DOOR, json=run_completed())
    assert (plain.status_code, plain.json()["field"]) == (415, "Content-Type")
    not_json = await client.post(DOOR, content=b"{not json", headers=CE)
    assert (not_json.status_code, not_json.json()["field"]) == (422, "body")
    assert (await post(client, ["a list"])).status_code == 422
    assert await event_count(runtime) == before
