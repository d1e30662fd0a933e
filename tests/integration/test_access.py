"""Keys and roles kept as events of the tenant (SPEC C52; decisions D28, D29), on real
PostgreSQL: what an admin issues or grants works at once, what it revokes is refused at the
next request, in this process and in another; another tenant's admin sees and changes
nothing; whoever is not a PlatformAdmin changes nothing (the log's event count unchanged)."""

import asyncio
import logging
import uuid

import httpx
import pytest

from services.edge.auth import hash_key
from services.processes.bootstrap import Runtime
from tests.conftest import client_for, event_count, settings_for
from tests.integration.access_keys import Admins, FakeKeys

READ = "/factory/feedback/digests"  # any route a factory.feedback.read key may read


async def issue(http: httpx.AsyncClient, subject: str, scopes: list[str]) -> dict[str, str]:
    answer = await http.post("/factory/keys", json={"subject": subject, "scopes": scopes})
    assert answer.status_code == 201, answer.text
    issued: dict[str, str] = answer.json()
    return issued


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def reads_once_granted(admin: httpx.AsyncClient, subject: str, key: str) -> None:
    """A stored key holds no role until its subject is granted one (decisions D26), and every
    read asks a role (D23, D76): refused first, Observer granted, then it reads."""
    refused = await admin.get(READ, headers=bearer(key))
    assert (refused.status_code, refused.json()["field"]) == (403, "role"), refused.text
    granted = await admin.post(
        "/factory/roles/grant", json={"subject": subject, "role": "Observer"}
    )
    assert granted.status_code == 200, granted.text


async def test_an_issued_key_works_at_once_and_is_refused_at_the_next_request_once_revoked(
    access_runtime: Runtime, admins: Admins
) -> None:
    async with client_for(access_runtime, admins.admin_a) as http:
        issued = await issue(http, "bruno", ["factory.feedback.read"])
        # A stored key holds its subject's grants only (D26); a read asks a role (D23, D76).
        await reads_once_granted(http, "bruno", issued["key"])
        assert (await http.get(READ, headers=bearer(issued["key"]))).status_code == 200
        revoked = await http.post(f"/factory/keys/{issued['keyId']}/revoke")
        assert revoked.status_code == 200, revoked.text
        refused = await http.get(READ, headers=bearer(issued["key"]))
        assert refused.status_code == 401
        listed = (
            await http.get("/factory/keys", params={"minPosition": revoked.json()["position"]})
        ).json()
    [key] = listed["items"]
    assert (key["keyId"], key["subject"], key["issuedBy"]) == (issued["keyId"], "bruno", "alice")
    assert key["revoked"]
    assert key["revokedBy"] == "alice"
    assert "key" not in key
    assert issued["key"] not in str(listed)


async def test_a_granted_role_holds_at_once_and_a_revoked_one_is_refused_at_the_next_request(
    access_runtime: Runtime, admins: Admins
) -> None:
    async with client_for(access_runtime, admins.admin_a) as admin:
        async with client_for(access_runtime, admins.plain_a) as anna:
            before = await anna.get("/factory/audit")
            assert before.status_code == 403
            assert before.json()["error"] == "not-permitted"
            granted = await admin.post(
                "/factory/roles/grant", json={"subject": "anna", "role": "Observer"}
            )
            assert granted.status_code == 200, granted.text
            assert (await anna.get("/factory/audit")).status_code == 200
            revoked = await admin.post(
                "/factory/roles/revoke", json={"subject": "anna", "role": "Observer"}
            )
            assert revoked.status_code == 200, revoked.text
            assert (await anna.get("/factory/audit")).status_code == 403
        roles = (await admin.get("/factory/roles")).json()
    assert roles["items"] == []


async def test_a_role_granted_to_a_subject_holds_for_its_stored_keys_too(
    access_runtime: Runtime, admins: Admins
) -> None:
    async with client_for(access_runtime, admins.admin_a) as admin:
        issued = await issue(admin, "carla", ["factory.feedback.read"])
        assert (await admin.get("/factory/audit", headers=bearer(issued["key"]))).status_code == 403
        await admin.post("/factory/roles/grant", json={"subject": "carla", "role": "PlatformAdmin"})
        page = await admin.get("/factory/roles", headers=bearer(issued["key"]))
    assert page.status_code == 200
    assert [(g["subject"], g["role"], g["grantedBy"]) for g in page.json()["items"]] == [
        ("carla", "PlatformAdmin", "alice")
    ]


async def test_a_revocation_reaches_another_api_process_without_a_request_of_its_own(
    access_runtime: Runtime, admins: Admins, database_url: str
) -> None:
    """Two processes on one database: the second hears the read model move (LISTEN) and
    stands its ring on the change; nothing is asked of it in between."""
    settings = settings_for(database_url, FakeKeys(admins.entries))  # type: ignore[arg-type]
    other = await Runtime.open(settings)
    try:
        await other.start_key_refresher()
        async with client_for(access_runtime, admins.admin_a) as admin:
            issued = await issue(admin, "dora", ["factory.feedback.read"])
            await reads_once_granted(admin, "dora", issued["key"])
            async with asyncio.timeout(20):  # the NOTIFY is asynchronous: wait for it, bounded
                while not getattr(other.keys.identify(issued["key"]), "roles", None):
                    await asyncio.sleep(0.01)
            async with client_for(other, issued["key"]) as dora:
                assert (await dora.get(READ)).status_code == 200
                await admin.post(f"/factory/keys/{issued['keyId']}/revoke")
                async with asyncio.timeout(20):
                    while other.keys.identify(issued["key"]) is not None:
                        await asyncio.sleep(0.01)
                assert (await dora.get(READ)).status_code == 401
    finally:
        await other.close()


async def test_only_a_platform_admin_changes_keys_and_roles_and_a_refusal_records_nothing(
    access_runtime: Runtime, admins: Admins
) -> None:
    async with client_for(access_runtime, admins.admin_a) as admin:
        issued = await issue(admin, "bruno", ["factory.feedback.read"])
    before = await event_count(access_runtime)
    async with client_for(access_runtime, admins.plain_a) as anna:
        tries = [
            await anna.post("/factory/keys", json={"subject": "eve", "scopes": []}),
            await anna.post(f"/factory/keys/{issued['keyId']}/revoke"),
            await anna.post(
                "/factory/roles/grant", json={"subject": "anna", "role": "PlatformAdmin"}
            ),
            await anna.post("/factory/roles/revoke", json={"subject": "alice", "role": "Observer"}),
            await anna.get("/factory/keys"),
            await anna.get("/factory/roles"),
        ]
    assert [t.status_code for t in tries] == [403] * 6
    assert {t.json()["error"] for t in tries} == {"not-permitted"}
    assert all(t.json()["needed"] == ["PlatformAdmin"] for t in tries)
    assert await event_count(access_runtime) == before


async def test_another_tenants_admin_sees_and_changes_nothing_of_this_tenant(
    access_runtime: Runtime, admins: Admins
) -> None:
    async with client_for(access_runtime, admins.admin_a) as admin_a:
        issued = await issue(admin_a, "bruno", ["factory.feedback.read"])
        await admin_a.post("/factory/roles/grant", json={"subject": "bruno", "role": "Reviewer"})
    before = await event_count(access_runtime)
    async with client_for(access_runtime, admins.admin_b) as admin_b:
        revoke = await admin_b.post(f"/factory/keys/{issued['keyId']}/revoke")
        assert revoke.status_code == 404
        assert (await admin_b.get("/factory/keys")).json()["items"] == []
        assert (await admin_b.get("/factory/roles")).json()["items"] == []
        audit = (await admin_b.get("/factory/audit")).json()["items"]
        assert [a["command"] for a in audit] == ["RevokeApiKey"]  # B's own refused try only
        assert audit[0]["result"] == "refused"
        assert audit[0]["reason"] == "not-found"
        # A grant of B to a subject of the same name is B's: A's bruno is untouched.
        await admin_b.post(
            "/factory/roles/grant", json={"subject": "bruno", "role": "PlatformAdmin"}
        )
    assert await event_count(access_runtime) == before + 2  # B's holder created, and its grant
    async with client_for(access_runtime, issued["key"]) as bruno:
        assert (await bruno.get("/factory/roles")).status_code == 403
        assert (await bruno.get(READ)).status_code == 200


async def test_bad_input_to_keys_and_roles_is_refused_naming_the_field(
    access_runtime: Runtime, admins: Admins
) -> None:
    async with client_for(access_runtime, admins.admin_a) as admin:
        unknown_scope = await admin.post(
            "/factory/keys", json={"subject": "bruno", "scopes": ["factory.all.things"]}
        )
        unknown_role = await admin.post(
            "/factory/roles/grant", json={"subject": "bruno", "role": "Emperor"}
        )
        extra = await admin.post(
            "/factory/roles/grant", json={"subject": "bruno", "role": "Reviewer", "by": "x"}
        )
        missing = await admin.post(f"/factory/keys/{uuid.uuid4()}/revoke")
    assert unknown_scope.status_code == 422
    assert unknown_scope.json()["field"] == "scopes"
    assert unknown_role.status_code == 422
    assert "role" in unknown_role.text
    assert extra.status_code == 422
    assert "by" in extra.text
    assert missing.status_code == 404


async def test_an_erased_persons_stored_key_and_roles_are_revoked_and_their_next_request_is_401(
    access_runtime: Runtime, admins: Admins, caplog: pytest.LogCaptureFixture
) -> None:
    """Decisions D146. Before, the erased person's stored key and roles still let requests
    through, acting as ``erased:<hex>``. The erasure revokes them by the commands an admin
    issues (an event and an audit row each); a configured key naming a person erased is the
    settings', which the service cannot revoke: the log names it by its hash, never whom."""
    async with client_for(access_runtime, admins.admin_a) as admin:
        issued = await issue(admin, "bruno", ["factory.feedback.read"])
        await reads_once_granted(admin, "bruno", issued["key"])
        assert (await admin.get(READ, headers=bearer(issued["key"]))).status_code == 200
        erased = await admin.delete("/factory/people/bruno")
        assert erased.status_code == 200, erased.text
        refused = await admin.get(READ, headers=bearer(issued["key"]))
        assert refused.status_code == 401, refused.text
        [key] = (await admin.get("/factory/keys")).json()["items"]
        roles = (await admin.get("/factory/roles")).json()["items"]
        audit = (await admin.get("/factory/audit")).json()["items"]
    assert key["keyId"] == issued["keyId"]
    assert key["revoked"]
    assert key["revokedBy"] == "alice"
    assert key["subject"].startswith("erased:")
    assert roles == []
    revocations = [a for a in audit if a["command"] in ("RevokeApiKey", "RevokeRole")]
    assert sorted((a["command"], a["result"], a["actor"]) for a in revocations) == [
        ("RevokeApiKey", "applied", "alice"),
        ("RevokeRole", "applied", "alice"),
    ]
    assert [a["aggregates"] for a in revocations if a["command"] == "RevokeApiKey"] == [
        [issued["keyId"]]
    ]
    assert "bruno" not in str(audit)

    async with client_for(access_runtime, admins.admin_a) as admin:
        with caplog.at_level(logging.WARNING, logger="services.privacy.revoking"):
            assert (await admin.delete("/factory/people/anna")).status_code == 200
    warned = [r.getMessage() for r in caplog.records if r.name == "services.privacy.revoking"]
    assert len(warned) == 1, warned
    assert f"sha256:{hash_key(admins.plain_a)[:16]}" in warned[0]
    assert "anna" not in warned[0]
    async with client_for(access_runtime, admins.plain_a) as anna:  # still known: no role
        assert (await anna.get("/factory/audit")).status_code == 403
