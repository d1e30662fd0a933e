"""One permission per fact, whatever the door (SPEC C52): each event type posted to
``POST /factory/events`` needs the scope of the HTTP route that writes the same fact, declared
once with its subscription. A key without it is refused (403 naming the scope) and nothing is
recorded; a key holding only that scope has the event applied."""

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from services.edge.auth import SCOPES, new_key
from services.processes.bootstrap import Runtime
from services.processes.contexts import SUBSCRIPTIONS
from tests.conftest import Keys, event_count, maintain
from tests.integration.test_event_door import post
from tests.integration.test_learning import AGENT, raise_on, tenant_of

AT = "2026-11-30T10:00:00Z"
# A valid payload of every declared type: a type declared without one here fails
# ``test_every_declared_type_is_covered``.
PAYLOADS: dict[str, dict[str, Any]] = {
    "factory.runs.v1.RunCompleted": {
        "runId": "r-1",
        "agentId": "coach",
        "outcome": "succeeded",
        "inputRef": "urn:input:1",
        "completedAt": AT,
    },
    "factory.artifacts.v1.ArtifactValidated": {
        "artifactRef": "urn:artifact:1",
        "validator": "schema",
        "outcome": "passed",
        "validatedAt": AT,
    },
    "factory.quality.v1.EvaluationCompleted": {
        "evaluationId": "ev-1",
        "targetAssetId": "agent-42",
        "passed": False,
        "completedAt": AT,
    },
    "factory.quality.v1.DriftDetected": {
        "driftId": "d-1",
        "targetAssetId": "agent-42",
        "metric": "groundedness",
        "baseline": 0.9,
        "observed": 0.5,
        "detectedAt": AT,
    },
    "factory.memory.v1.SkillCandidateProposed": {
        "candidateId": "c-1",
        "skillId": "skill-7",
        "reinforcements": 4,
        "proposedAt": AT,
    },
    "factory.agents.v1.OwnerOutcomeRecorded": {
        "outcomeId": "oc-1",
        "runId": "r-1",
        "draftId": "d-1",
        "verdict": "no_issue",
        "recordedAt": AT,
    },
    "factory.tasks.v1.TaskClosed": {
        "taskId": "task-1",
        "transitionId": "tr-1",
        "status": "done",
        "closedAt": AT,
    },
    "factory.registry.v1.AgentChanged": {
        "agent": "agent-42",
        "what": "instructions",
        "from": "v1",
        "to": "v2",
        "at": AT,
    },
    "evaluation.feedback.v1.RecordFeedback": {
        "projectId": "p",
        "subjectKind": "run",
        "subjectRef": "r-1",
        "kind": "escalation",
    },
}
RELEASE = "factory.registry.v1.DraftReleaseOpened"  # needs an accepted proposal: its own test
SCOPE_OF = {subscription.cloudevent_type: subscription.scope for subscription in SUBSCRIPTIONS}


@dataclass(frozen=True)
class ScopedKeys(Keys):
    """The usual test keys, and per scope a key of tenant A without it (every other scope)
    and one with only it."""

    without: dict[str, str] = field(default_factory=dict)
    only: dict[str, str] = field(default_factory=dict)


@pytest.fixture
def keys() -> ScopedKeys:
    tenant_a, tenant_b = f"tenant-a-{uuid.uuid4().hex[:6]}", f"tenant-b-{uuid.uuid4().hex[:6]}"
    a, entry_a = new_key(tenant_a, "alice", list(SCOPES))
    b, entry_b = new_key(tenant_b, "bob", list(SCOPES))
    entries = [entry_a, entry_b]
    without, only = {}, {}
    for scope in SCOPES:
        without[scope], entry = new_key(tenant_a, "alice", [s for s in SCOPES if s != scope])
        only[scope], entry_only = new_key(tenant_a, "alice", [scope])
        entries += [entry, entry_only]
    return ScopedKeys(a, b, "", "", "", json.dumps(entries), "", without, only)


def event(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "specversion": "1.0",
        "id": f"e-{uuid.uuid4().hex[:8]}",
        "source": "urn:neighbour",
        "type": kind,
        "data": data,
    }


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_every_declared_type_is_covered() -> None:
    assert set(SCOPE_OF) == {*PAYLOADS, RELEASE}


@pytest.mark.parametrize("kind", sorted(PAYLOADS))
async def test_an_event_needs_the_scope_of_its_http_equivalent(
    kind: str, runtime: Runtime, client: httpx.AsyncClient, keys: ScopedKeys
) -> None:
    scope = SCOPE_OF[kind]
    before = await event_count(runtime)
    refused = await post(client, event(kind, PAYLOADS[kind]), **auth(keys.without[scope]))
    assert refused.status_code == 403, refused.text
    assert (refused.json()["error"], refused.json()["scope"]) == ("forbidden", scope)
    assert await event_count(runtime) == before  # nothing recorded, not even a receipt
    applied = await post(client, event(kind, PAYLOADS[kind]), **auth(keys.only[scope]))
    assert applied.status_code == 201, applied.text
    assert applied.json()["applied"] is True
    assert await event_count(runtime) > before


async def test_a_draft_release_opened_event_needs_what_the_release_callback_needs(
    runtime: Runtime, client: httpx.AsyncClient, keys: ScopedKeys
) -> None:
    """The harm this closes: a key that cannot call the release callback posted the
    registry's event instead, and the registry's real answer was then refused (409)."""
    runtime.start_projections(["learning_proposals"])
    proposal_id = await raise_on(runtime, tenant_of(keys), 0)
    await maintain(client, keys.a, agent=AGENT)  # alice decides as its maintainer (D77)
    await client.post(f"/factory/learning/proposals/{proposal_id}/pick-up")
    accepted = await client.post(
        f"/factory/learning/proposals/{proposal_id}/decide", json={"decision": "accept"}
    )
    assert accepted.json()["state"] == "InReview", accepted.text  # approved (decisions D54)
    opened = {"proposalId": str(proposal_id), "releaseId": "rel-forged"}
    no_callback = keys.without["factory.assets.write"]
    callback = await client.post(
        f"/factory/learning/proposals/{proposal_id}/release",
        json={"releaseId": "rel-forged"},
        headers=auth(no_callback),
    )
    assert callback.status_code == 403  # the HTTP door, as before
    before = await event_count(runtime)
    refused = await post(client, event(RELEASE, opened), **auth(no_callback))
    assert refused.status_code == 403, refused.text
    assert refused.json()["scope"] == "factory.assets.write"
    assert await event_count(runtime) == before
    real = {"proposalId": str(proposal_id), "releaseId": "rel-9"}
    applied = await post(client, event(RELEASE, real), **auth(keys.only["factory.assets.write"]))
    assert applied.status_code == 201, applied.text
    shown = await client.get(f"/factory/learning/proposals/{proposal_id}")
    assert shown.status_code == 200
    found = await client.get(
        f"/factory/learning/proposals/{proposal_id}",
        params={"minPosition": applied.json()["position"]},
    )
    assert found.json()["resultingReleaseId"] == "rel-9"


async def test_an_unknown_type_is_still_refused_as_invalid_not_forbidden(
    runtime: Runtime, client: httpx.AsyncClient, keys: ScopedKeys
) -> None:
    unknown = event("factory.runs.v1.Unknown", {})
    answered = await post(client, unknown, **auth(keys.only["factory.feedback.read"]))
    assert (answered.status_code, answered.json()["field"]) == (422, "type")
    nobody = await post(client, unknown, Authorization="Bearer fl_not-a-key")
    assert nobody.status_code == 401
