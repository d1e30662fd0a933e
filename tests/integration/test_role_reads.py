"""The role rules of the read routes (SPEC C52; decisions D23), against real PostgreSQL: every
GET route × every role, allowed or refused 403 ``not-permitted`` naming the roles that read.
Every key holds every scope, so only its role decides. A Requester alone reads their own."""

import uuid
from typing import Any

import grpc
import pytest

from contracts.learning_pb2 import GetDatasetSnapshotRequest
from contracts.learning_pb2_grpc import LearningStub
from contracts.roles import ROLES
from services.permissions.rules import READ_ALL
from services.processes.bootstrap import Runtime
from tests.conftest import client_for
from tests.integration.test_dataset_grpc import bearer, free_port
from tests.integration.test_role_rules import (
    PATH_VALUES,
    RoleKeys,
    auth,
    filed_at,
    keys,  # noqa: F401  (the fixture)
    refusals_of,
    refused_for_role,
)

A, OBSERVER = "PlatformAdmin", "Observer"
# Reads with a rule of their own; every other GET route reads all of the tenant (READ_ALL).
OWN_RULE: dict[str, set[str]] = {
    "/factory/reports/mine": set(ROLES),  # the caller's own reports
    "/factory/reports/{report_id}": set(ROLES),  # own, or all with a READ_ALL role (below)
    "/factory/agents": set(ROLES),  # the register
    "/factory/agents/{agent}": set(ROLES),
    "/factory/agents/{agent}/webhook": {"AssetMaintainer", A},  # D190
    "/factory/operations/agent-webhooks": {"Operator", A, OBSERVER},  # D196
    "/factory/owners/agents": {"AssetMaintainer", A},  # D250
    "/factory/keys": {A},
    "/factory/roles": {A},
    "/factory/audit": {A, OBSERVER},
    "/factory/people/{person}/export": {A},
    # The instance's readers and the tenant's parked events (decisions D94).
    "/factory/operations/readers": {"Operator", A, OBSERVER},
    "/factory/operations/parked": {"Operator", A, OBSERVER},
    "/factory/operations/parked-messages": {"Operator", A, OBSERVER},
    "/factory/operations/orders": {"Operator", A, OBSERVER},
}
PATH_VALUES_READ = {
    **PATH_VALUES,
    "run_id": PATH_VALUES["report_id"],
    "line_id": "x",
    "ref": "sha256-" + "0" * 64,
    "week": "2026-W01",
    "date": "2026-01-01",
    "index": "1",
    "proposal_id:uuid": PATH_VALUES["proposal_id"],
}


def read_routes(document: dict[str, Any]) -> list[str]:
    return sorted(path for path, methods in document["paths"].items() if "get" in methods)


@pytest.mark.parametrize("role", ROLES)
async def test_every_read_route_is_allowed_or_refused_by_role(
    role: str,
    runtime: Runtime,
    keys: RoleKeys,  # noqa: F811
) -> None:
    """Decisions D23: a role that may read is never refused for its role (a random id may be
    a 404); any other is 403 ``not-permitted`` naming the roles that would do."""
    async with client_for(runtime, keys.by_role[role]) as http:
        document = (await http.get("/openapi.json")).json()
        routes = read_routes(document)
        assert "/factory/feedback" in routes
        assert "/factory/reports/inbox" in routes
        denied: list[str] = []
        for template in routes:
            allowed = OWN_RULE.get(template, set(READ_ALL))
            path = template.format(**PATH_VALUES_READ)
            answer = await http.get(path, headers=auth(keys.by_role[role]))
            if role in allowed:
                refused = answer.status_code == 403 and answer.json().get("field") == "role"
                assert not refused, (template, answer.text)
            else:
                refused_for_role(answer, allowed)
                denied.append(template)
        # Decisions D110: each refused read is one row of the audit, at the HTTP door.
        audited = await refusals_of(runtime, f"{role.lower()}-1")
        assert [(f"GET {t}", "not-permitted", "http") for t in denied] == audited


async def test_a_requester_reads_their_own_report_and_not_another_s(
    runtime: Runtime,
    keys: RoleKeys,  # noqa: F811
) -> None:
    """D23: a Requester alone reads the reports they filed, not another Requester's, which is
    absent to them exactly as a made-up id is (D100: the ids of others' reports cannot be told
    apart); a Reviewer reads both."""
    mine, theirs = keys.by_role["Requester"], keys.second["Requester"]
    runtime.start_projections(["inbox"])
    async with client_for(runtime, mine) as http:
        own, _ = await filed_at(http, mine)
        other, seen_at = await filed_at(http, theirs)
        wait = {"minPosition": seen_at}
        got = await http.get(f"/factory/reports/{own}", params=wait, headers=auth(mine))
        assert got.status_code == 200, got.text
        answer = await http.get(f"/factory/reports/{other}", params=wait, headers=auth(mine))
        made_up = str(uuid.uuid4())
        absent = await http.get(f"/factory/reports/{made_up}", params=wait, headers=auth(mine))
        assert (answer.status_code, absent.status_code) == (404, 404), answer.text
        assert answer.json() == {
            key: value.replace(made_up, other) if isinstance(value, str) else value
            for key, value in absent.json().items()
        }
        listed = await http.get("/factory/reports/mine", headers=auth(mine))
        assert listed.status_code == 200
        assert (await http.get("/factory/feedback", headers=auth(mine))).status_code == 403
        reviewer = keys.by_role["Reviewer"]
        for report in (own, other):
            seen = await http.get(f"/factory/reports/{report}", params=wait, headers=auth(reviewer))
            assert seen.status_code == 200, seen.text


@pytest.mark.parametrize("role", ROLES)
async def test_the_grpc_door_reads_a_snapshot_by_the_rule_of_the_http_read(
    role: str,
    runtime: Runtime,
    keys: RoleKeys,  # noqa: F811
) -> None:
    """Decisions D23, D113: ``GetDatasetSnapshot`` asks the rule the HTTP read of the same
    version asks. A role that reads all finds nothing here (NOT_FOUND, as HTTP's 404); a
    Requester alone is PERMISSION_DENIED (HTTP's 403), and the refusal is a row of the audit
    at the gRPC door (D110)."""
    asked = GetDatasetSnapshotRequest(dataset_id="agent:Office/Coach", version=1)
    port = await runtime.start_grpc(free_port())
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await LearningStub(channel).GetDatasetSnapshot(
                asked, metadata=bearer(keys.by_role[role])
            )
    async with client_for(runtime, keys.by_role[role]) as http:
        over_http = await http.get("/factory/evaluation/datasets/agent:Office/Coach/versions/1")
    audited = await refusals_of(runtime, f"{role.lower()}-1")
    if role in READ_ALL:
        assert refused.value.code() == grpc.StatusCode.NOT_FOUND
        assert over_http.status_code == 404, over_http.text
        assert audited == []
    else:
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
        refused_for_role(over_http, set(READ_ALL))
        assert audited == [
            ("feedbackloop.learning.v1.Learning/GetDatasetSnapshot", "not-permitted", "grpc"),
            (
                "GET /factory/evaluation/datasets/{datasetId}/versions/{version}",
                "not-permitted",
                "http",
            ),
        ]
