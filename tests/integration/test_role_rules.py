"""The role rules over HTTP (SPEC C52, C05; decisions D22–D27), against real PostgreSQL.

A table over every write route × every role: each role either may (whatever else the answer
says: a random id is a 404, a missing precondition a 409 or 422) or is refused 403
``not-permitted`` naming the roles needed, with nothing recorded. Then the rules that need
state: a reviewer and their own report, a maintainer and another agent's case, an observer,
another tenant's admin. Every key holds every scope, so only its role decides.
"""

import hashlib
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from contracts.roles import ROLES
from services.edge.auth import SCOPES, new_key
from services.processes.bootstrap import Runtime
from tests.conftest import Keys, client_for, event_count, maintain
from tests.integration.test_event_door import post
from tests.integration.test_event_door_scopes import PAYLOADS
from tests.unit.test_wrong_answer import SEED_FACTS

R, V, M, OP, A = "Requester", "Reviewer", "AssetMaintainer", "Operator", "PlatformAdmin"
GIVERS = {R, V, OP}

# Every write route, and the roles that may call it (decisions D23). A write route missing
# here fails ``test_the_table_names_every_write_route``. ``None``: no command behind it is
# checked by role.
ALLOWED: dict[tuple[str, str], set[str] | None] = {
    ("post", "/factory/feedback"): GIVERS,
    ("post", "/factory/feedback:batch"): GIVERS,
    # D101: uploaded by those who write what references an artifact (feedback, dataset tasks).
    ("post", "/factory/artifacts"): GIVERS,
    ("post", "/factory/reports"): {R},
    ("post", "/factory/reports/wrong-answer"): {R},
    ("post", "/factory/reports/{report_id}/submit"): {R},
    ("post", "/factory/reports/{report_id}/review"): {V},
    # D170–D173: a Reviewer's annotations, never on their own report.
    ("post", "/factory/reports/{report_id}/kind"): {V},
    ("post", "/factory/reports/{report_id}/tags"): {V},
    ("post", "/factory/reports/{report_id}/notes"): {V},
    ("post", "/factory/reports/{report_id}/lift"): {V, M},
    ("post", "/factory/evals/cases"): {V, M},
    ("patch", "/factory/evals/cases/{case_id}"): {M},
    ("post", "/factory/evals/cases/{case_id}/confirm"): {M},
    ("post", "/factory/evals/cases/{case_id}/runs"): {M},
    ("post", "/factory/evals/comparisons"): {M},  # decisions D181
    ("post", "/factory/learning/proposals/{proposal_id}/pick-up"): {M},
    ("post", "/factory/learning/proposals/{proposal_id}/decide"): {M},
    ("post", "/factory/learning/proposals/{proposal_id}/release"): {M},
    ("post", "/factory/evaluation/datasets/{datasetId}/tasks"): {OP},
    ("delete", "/factory/evaluation/datasets/{datasetId}/tasks/{taskId}"): {OP},
    ("post", "/factory/evaluation/datasets/{datasetId}/snapshot"): {OP},
    ("post", "/factory/evaluation/datasets/{datasetId}/consents"): {OP},
    ("post", "/factory/evaluation/datasets/{datasetId}/versions/{version}/shares"): {OP},
    ("put", "/factory/appraisal/charter"): {A},
    ("put", "/factory/agents/{agent}"): {A},
    # Decisions D190: an agent's webhook, by its maintainers in the register or an admin.
    ("put", "/factory/agents/{agent}/webhook"): {M, A},
    ("delete", "/factory/agents/{agent}/webhook"): {M, A},
    # Review queues (decisions D161): keepers define and remove, Reviewers claim, a holder
    # (a Reviewer) or a PlatformAdmin releases.
    ("put", "/factory/queues/{queue}"): {V, A},
    ("delete", "/factory/queues/{queue}"): {V, A},
    ("post", "/factory/queues/{queue}/claims"): {V},
    ("put", "/factory/reports/{report_id}/claim"): {V},
    ("delete", "/factory/reports/{report_id}/claim"): {V, A},
    # decisions D94: a release, not a command; the route holds the Operator rule itself
    ("post", "/factory/operations/parked/{reader}/{position}/retry"): {OP},
    ("post", "/factory/operations/parked-messages/{position}/retry"): {OP},
    # An owner's outcome is the owner's feedback on a draft (the scope of feedback).
    ("post", "/factory/appraisal/outcomes"): GIVERS,
    # Appraises what closed since; the readouts it decides are the service's own commands.
    ("post", "/factory/appraisal/closures:appraise"): None,
    ("post", "/factory/keys"): {A},
    ("post", "/factory/keys/{key_id}/revoke"): {A},
    ("post", "/factory/roles/grant"): {A},
    ("post", "/factory/roles/revoke"): {A},
    ("post", "/factory/console-sessions/end"): {A},  # decisions D122
    ("delete", "/factory/people/{person}"): {A},
    ("post", "/factory/events"): None,  # per event type: ``EVENT_ALLOWED``
    # D231: a Requester's key mints the widget's token; the widget's post takes that token
    # alone (an API key of any role is refused: tests/integration/test_widget.py).
    ("post", "/factory/widget/tokens"): {R},
    ("post", "/factory/widget/feedback"): None,
    # A published version is immutable: refused to everyone, no command behind it.
    ("put", "/factory/evaluation/datasets/{datasetId}/versions/{version}"): None,
    ("patch", "/factory/evaluation/datasets/{datasetId}/versions/{version}"): None,
    ("delete", "/factory/evaluation/datasets/{datasetId}/versions/{version}"): None,
}
# The event door, per CloudEvent type (the commands on Kafka are the same commands).
EVENT_ALLOWED: dict[str, set[str]] = {
    "factory.runs.v1.RunCompleted": {OP},
    "factory.artifacts.v1.ArtifactValidated": {OP},
    "factory.quality.v1.EvaluationCompleted": {OP},
    "factory.quality.v1.DriftDetected": {OP},
    "factory.memory.v1.SkillCandidateProposed": {OP},
    "evaluation.feedback.v1.RecordFeedback": GIVERS,
    "factory.agents.v1.OwnerOutcomeRecorded": GIVERS,
    "factory.tasks.v1.TaskClosed": {OP},
    # Decisions D241: any agent's change for these; the agent's own maintainer for M (the
    # test registers M's holder as its maintainer; tests/integration/test_nightly_reruns.py
    # shows another maintainer refused).
    "factory.registry.v1.AgentChanged": {OP, A, M},
}
PATH_VALUES = {
    "report_id": str(uuid.uuid4()),
    "case_id": str(uuid.uuid4()),
    "comparison_id": str(uuid.uuid4()),
    "proposal_id": str(uuid.uuid4()),
    "datasetId": "coach/smoke",
    "taskId": "t-1",
    "version": "1",
    "agent": "AgenticOffice/Agent/OfficeCoach",
    "key_id": str(uuid.uuid4()),
    "person": "someone",
    "reader": "rm_inbox",
    "position": "1",
    "queue": "fabricated",
}
CHARTER = b'[[line]]\nid = "inbox-short"\ntext = "Nobody\'s report waits long."\n'


@dataclass(frozen=True)
class RoleKeys(Keys):
    """The usual test keys, and per role a person of tenant A holding only that role (and
    every scope); ``admin_b``: tenant B's PlatformAdmin."""

    by_role: dict[str, str] = field(default_factory=dict)
    second: dict[str, str] = field(default_factory=dict)  # another person per role
    admin_b: str = ""


@pytest.fixture
def keys() -> RoleKeys:
    import json

    tenant_a, tenant_b = f"tenant-a-{uuid.uuid4().hex[:6]}", f"tenant-b-{uuid.uuid4().hex[:6]}"
    entries: list[dict[str, Any]] = []

    def made(tenant: str, subject: str, roles: list[str] | None) -> str:
        key, entry = new_key(tenant, subject, list(SCOPES), roles=roles)
        entries.append(entry)
        return key

    a, b = made(tenant_a, "alice", None), made(tenant_b, "bob", None)
    by_role = {role: made(tenant_a, f"{role.lower()}-1", [role]) for role in ROLES}
    second = {role: made(tenant_a, f"{role.lower()}-2", [role]) for role in ROLES}
    admin_b = made(tenant_b, "admin-b", [A])
    reporter_reviewer = made(tenant_a, "rita", [R, V])
    second["RequesterReviewer"] = reporter_reviewer
    return RoleKeys(
        a, b, a, a, a, json.dumps(entries), a, by_role=by_role, second=second, admin_b=admin_b
    )


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def write_routes(document: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (method, path)
        for path, methods in document["paths"].items()
        for method in methods
        if method in ("post", "put", "patch", "delete")
    }


async def call(
    http: httpx.AsyncClient, document: dict[str, Any], method: str, template: str, key: str
) -> httpx.Response:
    """The route called with the example body its OpenAPI document shows."""
    path = template.format(**PATH_VALUES)
    operation = document["paths"][template][method]
    content = operation.get("requestBody", {}).get("content", {})
    headers = auth(key)
    if "application/json" in content:
        example = content["application/json"].get("example", {})
        return await http.request(method, path, json=example, headers=headers)
    if template == "/factory/appraisal/charter":
        headers["Content-Type"] = "application/toml"
        return await http.request(method, path, content=CHARTER, headers=headers)
    return await http.request(method, path, headers=headers)


def refused_for_role(answer: httpx.Response, allowed: set[str]) -> None:
    if answer.status_code == 200 and "items" in answer.json():  # a batch: each item refused
        for item in answer.json()["items"]:
            assert (item["status"], item["error"], item["field"]) == (403, "not-permitted", "role")
        return
    assert answer.status_code == 403, answer.text
    body = answer.json()
    assert (body["error"], body["field"]) == ("not-permitted", "role"), body
    assert set(body["needed"]) <= allowed or body["needed"] == [], body


async def refusals_of(runtime: Runtime, actor: str) -> list[tuple[str, str, str | None]]:
    """The refusals the audit holds of ``actor``: (command or operation, reason, door), once
    for each item a row stands for (a batch's items refused alike are one row, D281)."""
    await runtime.bus.flush_audit()
    rows = await runtime.pool.fetch(
        "SELECT command, reason, door, items FROM audit_trail"
        " WHERE actor = $1 AND result = 'refused' ORDER BY id",
        actor,
    )
    return [(r["command"], r["reason"], r["door"]) for r in rows for _ in range(r["items"])]


def refused_items(answer: httpx.Response) -> int:
    """How many decisions a refused answer holds: a batch's items, else one."""
    if answer.status_code == 200 and "items" in answer.json():
        return len(answer.json()["items"])
    return 1


async def test_the_table_names_every_write_route(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    assert write_routes(document) == set(ALLOWED)


@pytest.mark.parametrize("role", ROLES)
async def test_every_write_route_is_allowed_or_refused_by_role_with_nothing_recorded(
    role: str, runtime: Runtime, keys: RoleKeys
) -> None:
    """Decisions D22/D23: a role not allowed is 403 ``not-permitted`` naming the role needed,
    and the store holds not one event more; an allowed role is never refused for its role."""
    actor = f"{role.lower()}-1"
    async with client_for(runtime, keys.by_role[role]) as http:
        document = (await http.get("/openapi.json")).json()
        for (method, template), allowed in sorted(ALLOWED.items()):
            if allowed is None:
                continue
            before = await event_count(runtime)
            seen = [] if role in allowed else await refusals_of(runtime, actor)
            answer = await call(http, document, method, template, keys.by_role[role])
            if role in allowed:
                refused = answer.status_code == 403 and answer.json().get("field") == "role"
                assert not refused, (method, template, answer.text)
            else:
                refused_for_role(answer, allowed)
                assert await event_count(runtime) == before, (method, template)
                # Decisions D110: each refusal is one row of the audit, whether the route or
                # the bus decided it.
                audited = await refusals_of(runtime, actor)
                assert len(audited) == len(seen) + refused_items(answer), (
                    template,
                    audited[len(seen) - 1 :],
                )
                assert all(door == "http" for _, _, door in audited[len(seen) :]), audited


@pytest.mark.parametrize("role", ROLES)
async def test_every_command_at_the_event_door_is_allowed_or_refused_by_role(
    role: str, runtime: Runtime, client: httpx.AsyncClient, keys: RoleKeys
) -> None:
    """The HTTP door of the Kafka commands and neighbours' facts applies the same rules
    (decisions D27): the key's roles decide."""
    changed = PAYLOADS["factory.registry.v1.AgentChanged"]["agent"]
    await maintain(client, keys.a, ("assetmaintainer-1",), agent=changed)
    for kind, allowed in sorted(EVENT_ALLOWED.items()):
        event = {
            "specversion": "1.0",
            "id": f"e-{uuid.uuid4().hex[:8]}",
            "source": "urn:neighbour",
            "type": kind,
            "data": PAYLOADS[kind],
        }
        before = await event_count(runtime)
        answer = await post(client, event, **auth(keys.by_role[role]))
        if role in allowed:
            assert answer.status_code == 201, (kind, answer.text)
        else:
            refused_for_role(answer, allowed)
            assert await event_count(runtime) == before, kind


async def test_an_event_naming_a_role_its_key_does_not_hold_is_refused(
    runtime: Runtime, client: httpx.AsyncClient, keys: RoleKeys
) -> None:
    kind = "evaluation.feedback.v1.RecordFeedback"
    event = {
        "specversion": "1.0",
        "id": f"e-{uuid.uuid4().hex[:8]}",
        "source": "urn:neighbour",
        "type": kind,
        "role": "Operator",
        "data": PAYLOADS[kind],
    }
    before = await event_count(runtime)
    answer = await post(client, event, **auth(keys.by_role[R]))
    refused_for_role(answer, {OP})
    assert await event_count(runtime) == before


@pytest.mark.parametrize("role", ROLES)
async def test_an_artifact_is_stored_only_by_a_role_that_writes_what_references_it(
    role: str, runtime: Runtime, keys: RoleKeys
) -> None:
    """Decisions D101: an Observer (or an admin) uploading real bytes is refused 403 and
    nothing is stored (the reference it would have had names no artifact); a giver stores it."""
    body = f"a comment of {role} {uuid.uuid4()}".encode()
    ref = "artifact:sha256:" + hashlib.sha256(body).hexdigest()
    async with client_for(runtime, keys.by_role[role]) as http:
        stored = await http.post(
            "/factory/artifacts", content=body, headers={"Content-Type": "text/plain"}
        )
        if role in GIVERS:
            assert stored.status_code == 201, stored.text
            assert stored.json()["ref"] == ref
        else:
            refused_for_role(stored, GIVERS)
        fetched = await http.get(f"/factory/artifacts/{ref}", headers=auth(keys.by_role[V]))
        assert fetched.status_code == (200 if role in GIVERS else 404), fetched.text


async def filed(http: httpx.AsyncClient, key: str, agent: str | None = None) -> str:
    """A wrong-answer report drafted and submitted by ``key``'s holder; its id."""
    return (await filed_at(http, key, agent))[0]


async def filed_at(http: httpx.AsyncClient, key: str, agent: str | None = None) -> tuple[str, str]:
    """A wrong-answer report drafted and submitted; its id and the submit's position."""
    facts = {**SEED_FACTS, "prompt": "Welchen Stundenansatz verrechne ich?"}
    if agent is not None:
        facts = {**facts, "reply": {**SEED_FACTS["reply"], "agentName": agent}}
    drafted = await http.post("/factory/reports/wrong-answer", json=facts, headers=auth(key))
    assert drafted.status_code == 201, drafted.text
    report_id = str(drafted.json()["reportId"])
    submitted = await http.post(f"/factory/reports/{report_id}/submit", headers=auth(key))
    assert submitted.status_code == 200, submitted.text
    return report_id, str(submitted.json()["position"])


async def test_a_reviewer_cannot_review_their_own_report(
    runtime: Runtime, client: httpx.AsyncClient, keys: RoleKeys
) -> None:
    """Decisions D24: the reporter is refused whatever roles they hold; another reviewer
    reviews it."""
    rita = keys.second["RequesterReviewer"]
    report_id = await filed(client, rita)
    review = f"/factory/reports/{report_id}/review"
    before = await event_count(runtime)
    own = await client.post(review, json={"status": "Triaged"}, headers=auth(rita))
    refused_for_role(own, {V})
    assert await event_count(runtime) == before
    other = await client.post(review, json={"status": "Triaged"}, headers=auth(keys.by_role[V]))
    assert other.status_code == 200, other.text
    assert other.json()["status"] == "Triaged"


async def registered(
    http: httpx.AsyncClient, key: str, agent: str, maintainers: list[str]
) -> httpx.Response:
    return await http.put(
        f"/factory/agents/{agent}",
        json={"maintainers": maintainers, "repository": "acme/coach"},
        headers=auth(key),
    )


async def test_a_maintainer_of_agent_a_cannot_confirm_a_case_of_agent_b(
    runtime: Runtime, client: httpx.AsyncClient, keys: RoleKeys
) -> None:
    """Decisions D23/D25: the register names each agent's maintainers; a maintainer of
    another agent is refused (nothing recorded), the agent's own confirms."""
    admin, lifter = keys.by_role[A], keys.by_role[V]
    agent_a, agent_b = "Office/Agent/A", "Office/Agent/B"
    assert (await registered(client, admin, agent_a, ["assetmaintainer-1"])).status_code == 200
    assert (await registered(client, admin, agent_b, ["assetmaintainer-2"])).status_code == 200
    report_id = await filed(client, keys.by_role[R], agent_b)
    lifted = await client.post(f"/factory/reports/{report_id}/lift", headers=auth(lifter))
    assert lifted.status_code == 201, lifted.text
    confirm = f"/factory/evals/cases/{lifted.json()['caseId']}/confirm"
    before = await event_count(runtime)
    theirs = await client.post(confirm, json={"confirmed": True}, headers=auth(keys.by_role[M]))
    refused_for_role(theirs, {M})
    assert await event_count(runtime) == before
    own = await client.post(confirm, json={"confirmed": True}, headers=auth(keys.second[M]))
    assert own.status_code == 200, own.text


async def test_the_register_names_an_agent_owner_report_s_addressee(
    runtime: Runtime, client: httpx.AsyncClient, keys: RoleKeys
) -> None:
    """W13, decisions D25, D133: not the maintainers the reporter typed, the register's, named
    by their role: the line is copied where a maintainer's erasure cannot reach."""
    agent = "Office/Agent/Registered"
    assert (await registered(client, keys.by_role[A], agent, ["ana", "ben"])).status_code == 200
    facts = {**SEED_FACTS, "reply": {**SEED_FACTS["reply"], "agentName": agent}}
    drafted = await client.post(
        "/factory/reports/wrong-answer", json=facts, headers=auth(keys.by_role[R])
    )
    assert drafted.status_code == 201, drafted.text
    assert f"Addressee: agent owner ({agent} — its registered maintainers)" in drafted.text
    assert "ana" not in drafted.text
    unregistered = {**SEED_FACTS, "reply": {**SEED_FACTS["reply"], "agentName": "Office/None"}}
    drafted = await client.post(
        "/factory/reports/wrong-answer", json=unregistered, headers=auth(keys.by_role[R])
    )
    assert "Addressee: agent owner (Office/None)" in drafted.text


async def test_only_a_platform_admin_writes_the_register_and_every_role_reads_it(
    runtime: Runtime, client: httpx.AsyncClient, keys: RoleKeys
) -> None:
    agent = "Office/Agent/Read"
    written = await registered(client, keys.by_role[A], agent, ["ana"])
    assert written.status_code == 200, written.text
    assert written.json()["maintainers"] == ["ana"]
    for role in ROLES:
        read = await client.get(f"/factory/agents/{agent}", headers=auth(keys.by_role[role]))
        assert read.status_code == 200, (role, read.text)
        assert read.json() == {"agent": agent, "maintainers": ["ana"], "repository": "acme/coach"}
    replaced = await client.put(
        f"/factory/agents/{agent}", json={"maintainers": ["ben"]}, headers=auth(keys.by_role[A])
    )
    assert replaced.json() == {**replaced.json(), "maintainers": ["ben"], "repository": None}
    before = await event_count(runtime)
    again = await client.put(
        f"/factory/agents/{agent}", json={"maintainers": ["ben"]}, headers=auth(keys.by_role[A])
    )
    assert again.status_code == 200
    assert await event_count(runtime) == before  # the same registration changes nothing


async def test_an_observer_reads_everything_of_the_tenant_and_changes_nothing(
    runtime: Runtime, client: httpx.AsyncClient, keys: RoleKeys
) -> None:
    """Decisions D23: the reads answer an Observer; every write refuses it (the table)."""
    runtime.start_projections(["inbox"])
    report_id, position = await filed_at(client, keys.by_role[R])
    observer = auth(keys.by_role["Observer"])
    seen = await client.get(
        f"/factory/reports/{report_id}", params={"minPosition": position}, headers=observer
    )
    assert seen.status_code == 200, seen.text
    for path in (
        "/factory/feedback",
        "/factory/reports/inbox",
        f"/factory/reports/{report_id}",
        "/factory/evals/cases",
        "/factory/learning/proposals",
        "/factory/evaluation/datasets",
        "/factory/feedback/digests",
        "/factory/evals/nights",
    ):
        read = await client.get(path, headers=observer)
        assert read.status_code == 200, (path, read.text)
    before = await event_count(runtime)
    review = await client.post(
        f"/factory/reports/{report_id}/review", json={"status": "Triaged"}, headers=observer
    )
    refused_for_role(review, {V})
    assert await event_count(runtime) == before


async def test_another_tenant_s_admin_sees_nothing(
    runtime: Runtime, client: httpx.AsyncClient, keys: RoleKeys
) -> None:
    agent = "Office/Agent/Private"
    assert (await registered(client, keys.by_role[A], agent, ["ana"])).status_code == 200
    report_id = await filed(client, keys.by_role[R])
    elsewhere = auth(keys.admin_b)
    assert (await client.get(f"/factory/agents/{agent}", headers=elsewhere)).status_code == 404
    assert (await client.get(f"/factory/reports/{report_id}", headers=elsewhere)).status_code == 404
    inbox = await client.get("/factory/reports/inbox", headers=elsewhere)
    assert inbox.json()["items"] == []
    # Their own registration of the same name is their tenant's, and leaves A's as it was.
    assert (await registered(client, keys.admin_b, agent, ["mallory"])).status_code == 200
    ours = await client.get(f"/factory/agents/{agent}", headers=auth(keys.by_role["Observer"]))
    assert ours.json()["maintainers"] == ["ana"]


async def test_feedback_records_the_giver_s_role(
    runtime: Runtime, client: httpx.AsyncClient, keys: RoleKeys
) -> None:
    """SPEC C05: requester, reviewer or operator, as the stored event says."""
    from services.feedback.domain import Feedback

    body = {"projectId": "p", "subjectKind": "run", "subjectRef": "r-1", "kind": "escalation"}
    for role in (R, V, OP):
        answer = await client.post("/factory/feedback", json=body, headers=auth(keys.by_role[role]))
        assert answer.status_code == 201, answer.text
        feedback: Feedback = runtime.store.repository.get(uuid.UUID(answer.json()["feedbackId"]))
        assert feedback.given_as == role.lower()
