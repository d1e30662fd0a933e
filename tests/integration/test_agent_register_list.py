"""The register listed (SPEC C52, W13; decisions D25, D78): ``GET /factory/agents`` and
``feedbackloop agents list`` over the register's read model, against real PostgreSQL: by agent
name, paged with sealed cursors, one tenant's agents only, readable by every role (D23)."""

import httpx

from contracts.roles import ROLES
from services.processes.bootstrap import Runtime
from tests.conftest import client_for
from tests.integration.test_access_cli import feedbackloop
from tests.integration.test_role_rules import (
    A,
    RoleKeys,
    auth,
    keys,  # noqa: F401  (the fixture)
)

LIST = "/factory/agents"


async def put(http: httpx.AsyncClient, key: str, agent: str, body: dict[str, object]) -> str:
    """A registration as the admin ``key`` holds it; its position."""
    answer = await http.put(f"{LIST}/{agent}", json=body, headers=auth(key))
    assert answer.status_code == 200, answer.text
    return str(answer.json()["position"])


async def test_the_register_is_listed_by_name_paged_and_per_tenant(
    runtime: Runtime,
    keys: RoleKeys,  # noqa: F811
) -> None:
    runtime.start_projections(["access"])
    admin = keys.by_role[A]
    async with client_for(runtime, admin) as http:
        await put(http, admin, "Office/Coach", {"maintainers": ["ana"], "repository": "acme/c"})
        await put(http, admin, "Office/Assistant", {"maintainers": ["ben", "cy"]})
        await put(http, keys.admin_b, "Office/Other", {"maintainers": ["bea"]})
        await put(http, admin, "Billing/Agent", {"maintainers": ["dan"]})
        # A later change is listed as it stands: the maintainers replaced, the repository named.
        last = await put(
            http, admin, "Office/Assistant", {"maintainers": ["cy"], "repository": "acme/a"}
        )
        first = await http.get(LIST, params={"limit": 2, "minPosition": last})
        assert first.status_code == 200, first.text
        assert first.json()["items"] == [
            {"agent": "Billing/Agent", "maintainers": ["dan"], "repository": None},
            {"agent": "Office/Assistant", "maintainers": ["cy"], "repository": "acme/a"},
        ]
        cursor = first.json()["next"]
        assert cursor is not None
        rest = await http.get(LIST, params={"limit": 2, "before": cursor})
        assert rest.json() == {
            "items": [{"agent": "Office/Coach", "maintainers": ["ana"], "repository": "acme/c"}],
            "next": None,
        }
        # Another tenant sees its own register only, and cannot use this tenant's cursor.
        theirs = await http.get(LIST, headers=auth(keys.admin_b))
        assert [item["agent"] for item in theirs.json()["items"]] == ["Office/Other"]
        foreign = await http.get(LIST, params={"before": cursor}, headers=auth(keys.admin_b))
        assert foreign.status_code == 422, foreign.text
        assert foreign.json()["field"] == "before"
        # Every role reads the register (decisions D23), a Requester alone too.
        for role in ROLES:
            read = await http.get(LIST, headers=auth(keys.by_role[role]))
            assert read.status_code == 200, (role, read.text)
            assert len(read.json()["items"]) == 3
        assert (await http.get(LIST, params={"limit": 0})).status_code == 422


async def test_feedbackloop_agents_list_prints_the_tenant_s_register(
    runtime: Runtime,
    database_url: str,
    keys: RoleKeys,  # noqa: F811
) -> None:
    runtime.start_projections(["access"])
    admin = keys.by_role[A]
    async with client_for(runtime, admin) as http:
        await put(http, admin, "Office/Coach", {"maintainers": ["ana", "ben"]})
        last = await put(http, keys.admin_b, "Office/Other", {"maintainers": ["bea"]})
        waited = await http.get(LIST, params={"minPosition": last}, headers=auth(keys.admin_b))
        assert waited.status_code == 200, waited.text
        tenant = runtime.keys.identify(admin)
    assert tenant is not None
    listed = await feedbackloop(database_url, "agents", "list", "--tenant", tenant.tenant_id)
    assert "Office/Coach" in listed
    assert "ana, ben" in listed
    assert "Office/Other" not in listed
    assert "1 agents" in listed


async def test_a_registration_repeated_under_its_idempotency_key_answers_what_it_holds(
    runtime: Runtime,
    keys: RoleKeys,  # noqa: F811
) -> None:
    """The same request under the same Idempotency-Key is applied once and answered again
    with what the register holds; another request under that key is a 409."""
    admin = keys.by_role[A]
    body = {"maintainers": ["ana"], "repository": "acme/c"}
    headers = {**auth(admin), "Idempotency-Key": "register-coach-1"}
    async with client_for(runtime, admin) as http:
        first = await http.put(f"{LIST}/Office/Coach", json=body, headers=headers)
        again = await http.put(f"{LIST}/Office/Coach", json=body, headers=headers)
        other = await http.put(
            f"{LIST}/Office/Coach", json={"maintainers": ["ben"]}, headers=headers
        )
    assert first.status_code == again.status_code == 200, again.text
    shown = {"agent": "Office/Coach", "maintainers": ["ana"], "repository": "acme/c"}
    assert {k: v for k, v in again.json().items() if k != "position"} == shown
    assert other.status_code == 409, other.text
