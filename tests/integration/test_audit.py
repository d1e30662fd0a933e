"""``GET /factory/audit`` and ``feedbackloop audit export`` on real PostgreSQL (SPEC C52;
decisions D30): every command decided in the tenant, applied or refused, whichever context it
belongs to; read by a PlatformAdmin or an Observer only; filtered by actor, aggregate and time;
paged; and written as CSV by the CLI."""

import asyncio
import csv
import io
import os
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from prometheus_client import REGISTRY

from contracts import topics
from services.bus.audit import AuditFilter, audit_page
from services.edge.auth import ApiKeyEntry, hash_key
from services.processes.bootstrap import Runtime
from tests.conftest import client_for, event_count, settings_for
from tests.integration.access_keys import Admins, FakeKeys, configured
from tests.integration.test_console_sessions import signed_in
from tests.kafka_peer import inbound, produce, record_feedback_event, settled

FEEDBACK = {
    "projectId": "p",
    "subjectKind": "run",
    "subjectRef": "r",
    "kind": "rating",
    "rating": 4,
}


async def every_page(http: httpx.AsyncClient, **params: str | int) -> list[dict[str, object]]:
    found: list[dict[str, object]] = []
    before = None
    while True:
        page = await http.get(
            "/factory/audit", params=params | ({"before": before} if before else {})
        )
        assert page.status_code == 200, page.text
        found += page.json()["items"]
        if (before := page.json()["next"]) is None:
            return found


async def story(runtime: Runtime, admins: Admins) -> dict[str, str]:
    """Alice (admin) records feedback, issues a key and grants a role; Anna (no role) tries a
    grant and is refused. Answers the issued key's id."""
    async with client_for(runtime, admins.admin_a) as alice:
        assert (await alice.post("/factory/feedback", json=FEEDBACK)).status_code == 201
        issued = await alice.post("/factory/keys", json={"subject": "bruno", "scopes": []})
        assert issued.status_code == 201
        granted = await alice.post(
            "/factory/roles/grant", json={"subject": "olga", "role": "Observer"}
        )
        assert granted.status_code == 200
    async with client_for(runtime, admins.plain_a) as anna:
        refused = await anna.post(
            "/factory/roles/grant", json={"subject": "anna", "role": "Reviewer"}
        )
        assert refused.status_code == 403
    key_id: str = issued.json()["keyId"]
    return {"keyId": key_id}


async def test_every_decision_of_the_tenant_is_listed_newest_first_applied_and_refused(
    access_runtime: Runtime, admins: Admins
) -> None:
    told = await story(access_runtime, admins)
    async with client_for(access_runtime, admins.admin_a) as alice:
        found = await every_page(alice)
    assert [(a["actor"], a["command"], a["result"]) for a in found] == [
        ("anna", "GrantRole", "refused"),
        ("alice", "GrantRole", "applied"),
        ("alice", "IssueApiKey", "applied"),
        ("alice", "RecordFeedback", "applied"),
    ]
    refused, granted, issued, _ = found
    assert refused["reason"] == "not-permitted"
    assert refused["roles"] == []
    assert granted["roles"] == ["PlatformAdmin", "Requester", "Reviewer"]
    assert granted["reason"] is None
    assert issued["aggregates"] == [told["keyId"]]
    assert all(datetime.fromisoformat(str(a["at"])).tzinfo is not None for a in found)


async def test_the_audit_is_filtered_by_actor_aggregate_and_time_and_paged_without_gaps(
    access_runtime: Runtime, admins: Admins
) -> None:
    start = datetime.now(UTC) - timedelta(seconds=1)
    told = await story(access_runtime, admins)
    async with client_for(access_runtime, admins.admin_a) as alice:
        everything = await every_page(alice)
        paged = await every_page(alice, limit=1)
        by_anna = await every_page(alice, actor="anna")
        on_key = await every_page(alice, aggregate=told["keyId"])
        since = await every_page(alice, since=start.isoformat())
        later = await every_page(alice, since=(start + timedelta(hours=1)).isoformat())
        until = await every_page(alice, until=start.isoformat())
        backwards = await alice.get(
            "/factory/audit",
            params={"since": start.isoformat(), "until": (start - timedelta(days=1)).isoformat()},
        )
        not_a_time = await alice.get("/factory/audit", params={"since": "yesterday"})
    assert len(everything) == 4
    assert paged == everything
    assert [a["command"] for a in by_anna] == ["GrantRole"]
    assert [a["command"] for a in on_key] == ["IssueApiKey"]
    assert since == everything
    assert later == []
    assert until == []
    assert backwards.status_code == 422
    assert not_a_time.status_code == 422


async def test_an_observer_reads_the_audit_and_a_person_without_the_role_or_another_tenant_does_not(
    access_runtime: Runtime, admins: Admins
) -> None:
    await story(access_runtime, admins)
    async with client_for(access_runtime, admins.admin_a) as alice:
        page = await alice.get("/factory/audit", params={"limit": 1})
        await alice.post("/factory/roles/grant", json={"subject": "anna", "role": "Observer"})
    cursor = page.json()["next"]
    before = await event_count(access_runtime)
    async with client_for(access_runtime, admins.plain_a) as anna:
        seen = await anna.get("/factory/audit")
        assert seen.status_code == 200
        assert len(seen.json()["items"]) == 5
        # An Observer reads; it changes nothing.
        assert (
            await anna.post("/factory/keys", json={"subject": "x", "scopes": []})
        ).status_code == 403
    async with client_for(access_runtime, admins.admin_b) as bob:
        assert (await bob.get("/factory/audit")).json()["items"] == []
        stolen = await bob.get("/factory/audit", params={"before": cursor})
        assert stolen.status_code == 422
        assert stolen.json()["field"] == "before"
    assert await event_count(access_runtime) == before


async def test_the_cli_exports_the_tenants_audit_as_csv(
    access_runtime: Runtime, admins: Admins, database_url: str, tmp_path: Path
) -> None:
    await story(access_runtime, admins)
    out = tmp_path / "audit.csv"
    env = {**os.environ, "DATABASE_URL": database_url}
    command = [sys.executable, "-m", "services.processes.cli", "audit", "export"]
    process = await asyncio.create_subprocess_exec(
        *command, "--tenant", admins.tenant_a, "--out", str(out),
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    said, _ = await process.communicate()
    assert process.returncode == 0, said.decode()
    assert "wrote 4 decisions" in said.decode()
    with out.open(newline="") as file:
        rows = list(csv.DictReader(file))
    assert [(r["actor"], r["command"], r["result"]) for r in rows] == [
        ("anna", "GrantRole", "refused"),
        ("alice", "GrantRole", "applied"),
        ("alice", "IssueApiKey", "applied"),
        ("alice", "RecordFeedback", "applied"),
    ]
    assert rows[1]["roles"] == "PlatformAdmin Requester Reviewer"
    assert rows[0]["reason"] == "not-permitted"
    only = tmp_path / "anna.csv"
    process = await asyncio.create_subprocess_exec(
        *command, "--tenant", admins.tenant_a, "--out", str(only), "--actor", "anna",
        "--aggregate", str(uuid.uuid4()), env=env, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    await process.communicate()
    assert process.returncode == 0
    with only.open(newline="") as file:
        assert list(csv.DictReader(file)) == []


async def test_a_command_that_came_over_kafka_is_in_the_audit_as_its_actor(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    """The audit is of the bus, not of one door: a neighbour's command on Kafka is a row too,
    applied, under the actor its CloudEvent names; another tenant's row is not shown."""
    command_topic = kafka_runtime.settings.topic_prefix + topics.RECORD_FEEDBACK
    data = {"projectId": "p", "subjectKind": "memory", "subjectRef": "m-1", "kind": "escalation"}
    tenant = f"tenant-k-{uuid.uuid4().hex[:6]}"
    messages = [
        record_feedback_event(tenant, "svc-a", data),
        record_feedback_event("another-tenant", "svc-b", data),
    ]
    await kafka_runtime.ensure_topics()
    await produce(kafka_bootstrap, command_topic, messages, key=b"a")
    async with inbound(kafka_runtime) as consumer:
        await settled(consumer, 2)
    await kafka_runtime.bus.flush_audit()
    rows, _ = await audit_page(kafka_runtime.pool, tenant, AuditFilter())
    assert [(r["actor"], r["command"], r["result"]) for r in rows] == [
        ("svc-a", "RecordFeedback", "applied")
    ]


FORMULA = "@SUM(1+2)"


async def test_a_cell_that_would_be_a_formula_is_text_in_every_csv_of_the_audit(
    database_url: str, admins: Admins, tmp_path: Path
) -> None:
    """OWASP's CSV injection (decisions D112): a subject ``@SUM(1+2)`` is written ``'@SUM(1+2)``
    by ``feedbackloop audit export`` and by the console's download, the one writer of both."""
    key, entry = configured(admins.tenant_a, FORMULA, ("Requester",))
    entries = admins.entries[:-1] + "," + entry.model_dump_json() + "]"
    rt = await Runtime.open(settings_for(database_url, FakeKeys(entries)))  # type: ignore[arg-type]
    try:
        async with client_for(rt, key) as formula:
            assert (await formula.post("/factory/feedback", json=FEEDBACK)).status_code == 201
        await rt.bus.flush_audit()
        transport = httpx.ASGITransport(app=rt.app(), raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as browser:
            assert (await signed_in(browser, admins.admin_a)).status_code == 303
            download = await browser.get("/audit.csv")
    finally:
        await rt.close()
    assert download.status_code == 200, download.text
    assert download.headers["content-type"].startswith("text/csv")
    downloaded = list(csv.DictReader(io.StringIO(download.text)))
    assert [(r["actor"], r["command"]) for r in downloaded] == [("'" + FORMULA, "RecordFeedback")]
    assert f'"\'{FORMULA}"' in download.text  # quoted, as every cell
    out = tmp_path / "audit.csv"
    env = {**os.environ, "DATABASE_URL": database_url}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.processes.cli", "audit", "export",
        "--tenant", admins.tenant_a, "--out", str(out),
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    said, _ = await process.communicate()
    assert process.returncode == 0, said.decode()
    with out.open(newline="") as file:
        exported = list(csv.DictReader(file))
    assert exported == downloaded


async def test_a_refusal_decided_at_a_route_before_the_bus_is_one_row_naming_the_operation(
    database_url: str, admins: Admins
) -> None:
    """Decisions D110: a route's own role check (a run asks it before the agent is asked
    anything), a missing scope and a role dependency each leave one row: the caller, the
    door, the operation asked (never a path's values) and the code; so does a console page
    a role may not read. A stranger's 401 leaves none (D111)."""
    tenant = admins.tenant_a
    ria, ria_entry = configured(tenant, "ria", ("Requester",))
    reader = f"fl_{uuid.uuid4().hex}"
    reader_entry = ApiKeyEntry(
        sha256=hash_key(reader),
        tenant=tenant,
        subject="rex",
        scopes=["factory.feedback.read"],
        roles=["Observer"],
    )  # type: ignore[arg-type]
    extra = ",".join(e.model_dump_json() for e in (ria_entry, reader_entry))
    entries = admins.entries[:-1] + "," + extra + "]"
    rt = await Runtime.open(settings_for(database_url, FakeKeys(entries)))  # type: ignore[arg-type]
    try:
        before = await event_count(rt)
        case = uuid.uuid4()
        async with client_for(rt, ria) as as_ria:
            run = await as_ria.post(f"/factory/evals/cases/{case}/runs", json={})
            assert run.status_code == 403, run.text
            inbox = await as_ria.get("/factory/reports/inbox")
            assert inbox.status_code == 403, inbox.text
        async with client_for(rt, reader) as as_rex:
            cases = await as_rex.get("/factory/evals/cases")
            assert (cases.status_code, cases.json()["error"]) == (403, "forbidden")
        async with client_for(rt, "fl_" + "0" * 32) as stranger:
            assert (await stranger.get("/factory/reports/inbox")).status_code == 401
        transport = httpx.ASGITransport(app=rt.app(), raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as browser:
            assert (await signed_in(browser, ria)).status_code == 303
            assert (await browser.get("/audit")).status_code == 403  # the console's door
        assert await event_count(rt) == before
        async with client_for(rt, admins.admin_a) as alice:
            found = await every_page(alice)
    finally:
        await rt.close()
    assert [(a["actor"], a["command"], a["result"], a["reason"], a["door"]) for a in found] == [
        ("ria", "GET /audit", "refused", "not-permitted", "console"),
        ("rex", "GET /factory/evals/cases", "refused", "forbidden", "http"),
        ("ria", "GET /factory/reports/inbox", "refused", "not-permitted", "http"),
        ("ria", "POST /factory/evals/cases/{case_id}/runs", "refused", "not-permitted", "http"),
    ]
    assert all(a["commandId"] == "" and a["aggregates"] == [] for a in found)
    assert found[2]["roles"] == ["Requester"]
    assert str(case) not in str(found)


async def test_a_caller_without_a_valid_key_is_counted_by_door_not_audited(
    access_runtime: Runtime,
) -> None:
    """Decisions D111: a 401 names nobody of a tenant: no row anywhere, one count."""

    def counted() -> float:
        value = REGISTRY.get_sample_value(
            "feedbackloop_unauthenticated_requests_total", {"door": "http"}
        )
        return value or 0.0

    before = counted()
    async with client_for(access_runtime, "fl_" + "1" * 32) as stranger:
        for _ in range(3):
            assert (await stranger.get("/factory/audit")).status_code == 401
    await access_runtime.bus.flush_audit()
    assert await access_runtime.pool.fetchval("SELECT count(*) FROM audit_trail") == 0
    assert counted() == before + 3
