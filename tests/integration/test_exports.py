"""Exports of feedback and reports (decisions D210–D213), on real PostgreSQL through the API
and the CLI: filtered like their lists, the tenant's own, refused to a role that may not read
the list, one audit row each, formula-safe CSV, and an erased person's words absent."""

import asyncio
import csv
import io
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from services.bus.audit import AuditFilter, audit_page
from services.edge.auth import SCOPES, new_key
from services.processes.bootstrap import Runtime
from tests.conftest import Keys, client_for, event_count, settings_for
from tests.integration.test_privacy_erasure import caught_up

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

FORMULA = '=HYPERLINK("http://evil.example","click")'


def key_of(tenant: str, subject: str, roles: list[str]) -> tuple[str, dict[str, Any]]:
    key, entry = new_key(tenant, subject, list(SCOPES))
    return key, {**entry, "roles": roles}


class People:
    def __init__(self) -> None:
        self.tenant, self.other_tenant = f"ta-{uuid.uuid4().hex[:6]}", f"tb-{uuid.uuid4().hex[:6]}"
        self.eve = f"eve-{uuid.uuid4().hex[:8]}"  # a reporter, later erased
        self.alice, alice = key_of(self.tenant, "alice", ["Reviewer", "PlatformAdmin"])
        self.ria, ria = key_of(self.tenant, "ria", ["Requester"])
        self.eve_key, eve = key_of(self.tenant, self.eve, ["Requester"])
        self.bob, bob = key_of(self.other_tenant, "bob", ["Requester", "Reviewer", "PlatformAdmin"])
        self.entries = json.dumps([alice, ria, eve, bob])


@pytest.fixture
async def people_runtime(database_url: str) -> Any:
    people = People()
    settings = settings_for(database_url, Keys("", "", "", "", "", people.entries))
    rt = await Runtime.open(settings)
    rt.start_projections()
    try:
        yield people, rt
    finally:
        await rt.close()


async def feedback(http: httpx.AsyncClient, ref: str, kind: str = "rating") -> None:
    body: dict[str, Any] = {"projectId": "p", "subjectKind": "run", "subjectRef": ref, "kind": kind}
    if kind == "rating":
        body["rating"] = 2
    answer = await http.post("/factory/feedback", json=body)
    assert answer.status_code == 201, answer.text


async def report(http: httpx.AsyncClient, message: str) -> str:
    draft = await http.post("/factory/reports", json={"category": "praise", "message": message})
    assert draft.status_code == 201, draft.text
    report_id: str = draft.json()["reportId"]
    submitted = await http.post(f"/factory/reports/{report_id}/submit")
    assert submitted.status_code == 200, submitted.text
    return report_id


async def story(people: People, rt: Runtime) -> dict[str, str]:
    """Tenant A: three ratings and an escalation by alice, a report with a formula by ria
    (triaged by alice), a report by eve; tenant B: a rating and a report by bob."""
    async with client_for(rt, people.alice) as alice:
        for ref in ("run-1", "run-2", FORMULA):
            await feedback(alice, ref)
        await feedback(alice, "run-3", "escalation")
    async with client_for(rt, people.ria) as ria:
        formula = await report(ria, FORMULA)
    async with client_for(rt, people.eve_key) as eve:
        eves = await report(eve, f"eve says zebra-{people.eve}")
    async with client_for(rt, people.alice) as alice:
        triaged = await alice.post(f"/factory/reports/{formula}/review", json={"status": "Triaged"})
        assert triaged.status_code == 200, triaged.text
    async with client_for(rt, people.bob) as bob:
        await feedback(bob, "run-of-b")
        await report(bob, "bob's words")
    await caught_up(rt)
    return {"formula": formula, "eve": eves}


def csv_of(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def lines_of(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


async def exports_audited(rt: Runtime, tenant: str) -> list[tuple[str, str, str, str]]:
    await rt.bus.flush_audit()
    rows, _ = await audit_page(rt.pool, tenant, AuditFilter(), limit=50)
    return [
        (r["actor"], r["command"], r["result"], r["door"]) for r in rows if "export" in r["command"]
    ]


async def test_feedback_and_reports_export_as_their_lists_filter_them_in_csv_and_json_lines(
    people_runtime: Any,
) -> None:
    people, rt = people_runtime
    ids = await story(people, rt)
    before = await event_count(rt)
    async with client_for(rt, people.alice) as alice:
        listed = (await alice.get("/factory/feedback", params={"kind": "rating"})).json()
        as_csv = await alice.get("/factory/feedback/export", params={"kind": "rating"})
        as_lines = await alice.get(
            "/factory/feedback/export", params={"kind": "rating", "format": "jsonl"}
        )
        inbox = await alice.get("/factory/reports/inbox/export", params={"format": "jsonl"})
        triaged = await alice.get("/factory/reports/inbox/export", params={"status": "Triaged"})
    assert as_csv.status_code == 200, as_csv.text
    assert as_csv.headers["content-type"].startswith("text/csv")
    assert 'attachment; filename="feedback-' in as_csv.headers["content-disposition"]
    rows = csv_of(as_csv.text)
    # The list's rows under the same filter, in its order; the tenant's own only.
    assert [r["feedbackId"] for r in rows] == [f["feedbackId"] for f in listed["items"]]
    assert len(rows) == 3
    assert {r["kind"] for r in rows} == {"rating"}
    assert "run-of-b" not in as_csv.text
    assert "run-3" not in as_csv.text
    # OWASP's CSV injection (D112): the formula is text, quoted.
    assert rows[0]["subjectRef"] == "'" + FORMULA
    assert as_lines.headers["content-type"].startswith("application/jsonl")
    objects = lines_of(as_lines.text)
    assert [o["feedbackId"] for o in objects] == [r["feedbackId"] for r in rows]
    assert objects[0]["subjectRef"] == FORMULA  # JSON is not a spreadsheet: kept as given
    assert all("position" not in o for o in objects)  # no log positions (D210)

    reports = lines_of(inbox.text)
    assert {r["reportId"] for r in reports} == {ids["formula"], ids["eve"]}
    (formula,) = [r for r in reports if r["reportId"] == ids["formula"]]
    assert [s["step"] for s in formula["lifecycle"]] == ["drafted", "submitted", "triaged"]
    assert [s["actor"] for s in formula["lifecycle"]] == ["ria", "ria", "alice"]
    (only,) = csv_of(triaged.text)
    assert (only["reportId"], only["status"], only["message"]) == (
        ids["formula"], "Triaged", "'" + FORMULA,
    )  # fmt: skip
    assert json.loads(only["lifecycle"])[-1]["step"] == "triaged"
    assert only["review.reviewedBy"] == "alice"
    # Another tenant's reviewer exports their own tenant's alone.
    async with client_for(rt, people.bob) as bob:
        theirs = lines_of((await bob.get("/factory/reports/inbox/export?format=jsonl")).text)
    assert [r["message"] for r in theirs] == ["bob's words"]
    assert await event_count(rt) == before  # an export decides nothing on the log
    assert await exports_audited(rt, people.tenant) == [
        ("alice", "GET /factory/reports/inbox/export (csv)", "applied", "http"),
        ("alice", "GET /factory/reports/inbox/export (jsonl)", "applied", "http"),
        ("alice", "GET /factory/feedback/export (jsonl)", "applied", "http"),
        ("alice", "GET /factory/feedback/export (csv)", "applied", "http"),
    ]


async def test_an_export_is_refused_to_a_role_that_may_not_read_its_list_and_bad_input_is_422(
    people_runtime: Any,
) -> None:
    people, rt = people_runtime
    await story(people, rt)
    async with client_for(rt, people.ria) as ria:
        for path in ("/factory/feedback/export", "/factory/reports/inbox/export"):
            refused = await ria.get(path)
            assert refused.status_code == 403, refused.text
            assert refused.json()["field"] == "role"
    async with client_for(rt, people.alice) as alice:
        wrong = await alice.get("/factory/feedback/export", params={"format": "xlsx"})
        unknown = await alice.get("/factory/reports/inbox/export", params={"status": "Gone"})
    assert (wrong.status_code, wrong.json()["field"]) == (422, "format")
    assert (unknown.status_code, unknown.json()["field"]) == (422, "status")
    assert await exports_audited(rt, people.tenant) == [
        ("ria", "GET /factory/reports/inbox/export", "refused", "http"),
        ("ria", "GET /factory/feedback/export", "refused", "http"),
    ]


async def test_an_erased_persons_words_are_in_no_export(people_runtime: Any) -> None:
    people, rt = people_runtime
    await story(people, rt)
    words = f"zebra-{people.eve}"
    async with client_for(rt, people.alice) as alice:
        before = await alice.get("/factory/reports/inbox/export")
        assert words in before.text
        erased = await alice.delete(f"/factory/people/{people.eve}")
        assert erased.status_code == 200, erased.text
        await caught_up(rt)
        for form in ("csv", "jsonl"):
            after = await alice.get("/factory/reports/inbox/export", params={"format": form})
            assert after.status_code == 200
            assert words not in after.text
            assert people.eve not in after.text
            assert "[erased]" in after.text


async def cli(database_url: str, *arguments: str) -> str:
    env = {**os.environ, "DATABASE_URL": database_url}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.processes.cli", "exports", *arguments,
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    said, _ = await process.communicate()
    assert process.returncode == 0, said.decode()
    return said.decode()


async def test_the_cli_exports_as_the_api_does_and_each_export_is_audited(
    people_runtime: Any, database_url: str, tmp_path: Path
) -> None:
    people, rt = people_runtime
    ids = await story(people, rt)
    async with client_for(rt, people.alice) as alice:
        api = (await alice.get("/factory/reports/inbox/export", params={"format": "jsonl"})).text
        api_feedback = (await alice.get("/factory/feedback/export")).text
    out = tmp_path / "reports.jsonl"
    said = await cli(
        database_url, "reports", "--tenant", people.tenant, "--out", str(out), "--format", "jsonl"
    )
    assert f"wrote 2 reports rows of {people.tenant}" in said
    assert out.read_text() == api
    only = tmp_path / "escalations.csv"
    await cli(
        database_url, "feedback", "--tenant", people.tenant, "--out", str(only),
        "--kind", "escalation",
    )  # fmt: skip
    (row,) = csv_of(only.read_text())
    assert row["subjectRef"] == "run-3"
    everything = tmp_path / "feedback.csv"
    await cli(database_url, "feedback", "--tenant", people.tenant, "--out", str(everything))
    assert everything.read_bytes().decode() == api_feedback
    assert ids["formula"] in api
    rows, _ = await audit_page(rt.pool, people.tenant, AuditFilter(), limit=50)
    cli_rows = [(r["command"], r["result"], r["door"]) for r in rows if r["door"] == "cli"]
    assert cli_rows == [
        ("exports feedback (csv)", "applied", "cli"),
        ("exports feedback (csv)", "applied", "cli"),
        ("exports reports (jsonl)", "applied", "cli"),
    ]
    assert all(r["actor"].startswith("operator:") for r in rows if r["door"] == "cli")
