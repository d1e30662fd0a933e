"""A reviewer's annotations of a report over HTTP and in the digest, on a real PostgreSQL
(decisions D170–D174): the corrected Kind and Addressee shown beside the reporter's, tags, the
private notes only Reviewers read, and what a bad input gets (422 naming the field, nothing
recorded)."""

import asyncio
from datetime import timedelta
from typing import Any

import httpx
import pytest

from contracts.annotations import CorrectKind, CorrectReportKind, NoteReportCommand
from services.digests.sources import submitted_reports
from services.followers.waiting import wait_for_position
from services.processes.bootstrap import Runtime
from tests.conftest import Keys, client_for, event_count
from tests.integration.test_digest import MONDAY, send, submit, tenant_of
from tests.integration.test_http_door import refused
from tests.integration.test_role_rules import filed


async def detail(http: httpx.AsyncClient, report_id: str, position: Any) -> dict[str, Any]:
    answer = await http.get(f"/factory/reports/{report_id}", params={"minPosition": position})
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


async def test_a_reviewer_corrects_tags_and_notes_and_the_report_shows_both_kinds(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """D170–D173: alice files a not-found report; anna (a Reviewer) corrects it to
    fabricated, tags it and notes on it. The report keeps alice's Kind and Addressee beside
    anna's; anna reads the note, alice does not; tagging twice is one tag."""
    runtime.start_projections()
    report_id = await filed(client, keys.a)
    async with client_for(runtime, keys.a_other) as anna:
        corrected = await anna.post(
            f"/factory/reports/{report_id}/kind", json={"kind": "fabricated"}
        )
        assert corrected.status_code == 200, corrected.text
        for _ in range(2):
            tagged = await anna.post(f"/factory/reports/{report_id}/tags", json={"tag": "q3-node"})
            assert tagged.status_code == 200, tagged.text
        noted = await anna.post(
            f"/factory/reports/{report_id}/notes", json={"note": "Same node as last week."}
        )
        assert noted.status_code == 200, noted.text
        seen = await detail(anna, report_id, noted.json()["position"])
    assert seen["parsed"]["kind"] == "not-found"  # the reporter's, kept
    assert seen["parsed"]["addressee"].startswith("agent owner")
    annotations = seen["annotations"]
    assert annotations["correction"]["kind"] == "fabricated"
    assert annotations["correction"]["addressee"] == "agent owner"  # D171: the kind's role
    assert annotations["correction"]["correctedBy"] == "anna"
    assert annotations["tags"] == ["q3-node"]
    assert [(n["notedBy"], n["words"]) for n in annotations["notes"]] == [
        ("anna", "Same node as last week.")
    ]
    steps = [step["step"] for step in seen["lifecycle"]]
    assert steps[-3:] == ["corrected the kind to fabricated", "tagged", "added a private note"]
    assert "Same node" not in str(seen["lifecycle"])  # the lifecycle is the reporter's too
    # The reporter reads the correction and the tags, never the note (D173).
    mine = await detail(client, report_id, noted.json()["position"])
    assert mine["annotations"]["correction"]["kind"] == "fabricated"
    assert mine["annotations"]["notes"] is None
    # The Inbox filters by the Kind in force.
    inbox = await client.get("/factory/reports/inbox", params={"kind": "fabricated"})
    assert [item["reportId"] for item in inbox.json()["items"]] == [report_id]
    inbox = await client.get("/factory/reports/inbox", params={"kind": "not-found"})
    assert inbox.json()["items"] == []
    # Another tenant's reviewer: as absent as a made-up id.
    async with client_for(runtime, keys.b) as bob:
        answer = await bob.post(f"/factory/reports/{report_id}/tags", json={"tag": "x"})
        assert answer.status_code == 404, answer.text


@pytest.mark.parametrize(
    ("route", "body", "field"),
    [
        ("kind", {"kind": "made-up"}, "kind"),
        ("kind", {"kind": "fabricated", "addressee": "Ana Smith"}, "addressee"),
        ("kind", {"kind": "fabricated", "correctedBy": "eve"}, "correctedBy"),
        ("tags", {"tag": "Wrong Node"}, "tag"),
        ("tags", {"tag": "-x"}, "tag"),
        ("tags", {"tag": "a" * 41}, "tag"),
        ("notes", {"note": " \u200b "}, "note"),
        ("notes", {"note": "x" * 4_001}, "note"),
        ("notes", {}, "note"),
    ],
)
async def test_a_bad_annotation_is_refused_naming_its_field_and_nothing_is_recorded(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys, route: str, body: Any, field: str
) -> None:
    report_id = await filed(client, keys.a)
    before = await event_count(runtime)
    async with client_for(runtime, keys.a_other) as anna:
        answer = await anna.post(f"/factory/reports/{report_id}/{route}", json=body)
    refused(answer, 422, field)
    assert await event_count(runtime) == before


async def test_a_reviewer_never_annotates_their_own_report_nor_a_draft(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """SPEC C52, D24 as for a review; W27: a draft is no report yet."""
    report_id = await filed(client, keys.a)
    before = await event_count(runtime)
    own = await client.post(f"/factory/reports/{report_id}/notes", json={"note": "mine"})
    refused(own, 403, "role")
    drafted = await client.post("/factory/reports", json={"category": "idea", "message": "PDF"})
    draft_id = drafted.json()["reportId"]
    before = await event_count(runtime)
    async with client_for(runtime, keys.a_other) as anna:
        answer = await anna.post(f"/factory/reports/{draft_id}/tags", json={"tag": "pdf"})
    refused(answer, 404)
    # A report with no labelled block has no Kind to correct.
    await client.post(f"/factory/reports/{draft_id}/submit")
    before = await event_count(runtime)
    async with client_for(runtime, keys.a_other) as anna:
        answer = await anna.post(f"/factory/reports/{draft_id}/kind", json={"kind": "other"})
    refused(answer, 409, "kind")
    assert await event_count(runtime) == before


async def test_the_digest_counts_the_kind_in_force_at_the_end_of_its_week(
    runtime: Runtime, keys: Keys
) -> None:
    """D170: a week that ended before the correction keeps the reporter's Kind, however late
    its digest is built; a week that ends after it counts the corrected Kind."""
    runtime.start_projections()
    tenant = tenant_of(keys)
    first = await submit(runtime, tenant, MONDAY + timedelta(days=1))  # not-found
    later = await submit(runtime, tenant, MONDAY + timedelta(days=8))  # the next week
    fabricated = CorrectKind(kind="fabricated")
    for report_id in (first, later):
        await send(
            runtime, tenant, CorrectReportKind(report_id=report_id, correction=fabricated),
            MONDAY + timedelta(days=9),
        )  # fmt: skip
    last = await send(
        runtime, tenant, NoteReportCommand(report_id=later, note="seen"),
        MONDAY + timedelta(days=9),
    )  # fmt: skip
    assert last.status == "New"
    head = await asyncio.to_thread(runtime.store.recorder.max_notification_id) or 0
    assert await wait_for_position(runtime.pool, "rm_inbox", head, 30) >= head
    week_one = await submitted_reports(runtime.pool, tenant, MONDAY, MONDAY + timedelta(7), bound=9)
    assert [(r.report_id, r.kind) for r in week_one] == [(first, "not-found")]
    week_two = await submitted_reports(
        runtime.pool, tenant, MONDAY + timedelta(7), MONDAY + timedelta(14), bound=9
    )
    assert [(r.report_id, r.kind) for r in week_two] == [(later, "fabricated")]
    both = await submitted_reports(runtime.pool, tenant, MONDAY, MONDAY + timedelta(14), bound=9)
    assert {r.kind for r in both} == {"fabricated"}  # both weeks, once the correction stands
