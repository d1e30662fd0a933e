"""Review queues on real PostgreSQL (decisions D160–D164): two reviewers claiming one report
at once (exactly one wins), claim next, expiry by the clock, release, progress, the caller's
claims, a rebuild equal to the live read model, and bad input refused with nothing recorded."""

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import pytest

from contracts.errors import Conflict, NotPermitted
from contracts.queues import ClaimReport, DefineQueue, DefineQueueCommand, ReleaseClaim
from contracts.reports import DraftReport, ReviewReport, ReviewReportCommand, SubmitReport
from projections.review_queues import (
    ReviewQueues,
    claims_held_by,
    next_candidates,
    queue_progress,
)
from services.bus.issued import Issued
from services.processes.bootstrap import Runtime
from services.projecting.live import ProjectionRunner
from services.projecting.rebuild import rebuild
from services.store.event_store import EVENTS_TABLE
from tests.conftest import client_for, event_count
from tests.integration.test_access_cli import feedbackloop
from tests.integration.test_role_rules import (
    RoleKeys,
    auth,
    filed_at,
    keys,  # noqa: F401  (the fixture)
)

T0 = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)  # a Thursday
REVIEWER = frozenset({"Reviewer"})


async def send(
    runtime: Runtime, command: Any, actor: str, key: str, at: datetime, roles: Any = None
) -> Any:
    return (await runtime.bus.execute(Issued(command, "t1", actor, key, at, roles=roles))).result


async def report(runtime: Runtime, n: int, at: datetime, category: str = "answer") -> UUID:
    state = await send(
        runtime, DraftReport(category=category, message=f"report {n}"), "rita", f"d{n}", at
    )
    await send(runtime, SubmitReport(report_id=state.report_id), "rita", f"s{n}", at)
    return UUID(str(state.report_id))


async def define(runtime: Runtime, queue: str, body: dict[str, Any], at: datetime = T0) -> None:
    command = DefineQueueCommand(queue=queue, definition=DefineQueue.model_validate(body))
    await send(runtime, command, "lead", f"q/{queue}/{at}", at)


async def caught_up(runtime: Runtime) -> ProjectionRunner:
    runner = ProjectionRunner(runtime.store, runtime.pool, ReviewQueues())
    await runner.start()
    await runner.catch_up()
    return runner


async def test_two_reviewers_claiming_one_report_at_once_exactly_one_wins(
    runtime: Runtime,
    keys: RoleKeys,  # noqa: F811
) -> None:
    """D163: two real HTTP requests at once for the same report: one 200, one 409 naming
    until when; the store holds one claim."""
    runtime.start_projections(["review_queues"])
    first, second = keys.by_role["Reviewer"], keys.second["Reviewer"]
    async with client_for(runtime, first) as http:
        report_id, _ = await filed_at(http, keys.by_role["Requester"])
        defined = await http.put("/factory/queues/all", json={}, headers=auth(first))
        assert defined.status_code == 200, defined.text
        path = f"/factory/reports/{report_id}/claim"
        answers = await asyncio.gather(
            http.put(path, json={"queue": "all"}, headers=auth(first)),
            http.put(path, json={"queue": "all"}, headers=auth(second)),
        )
        assert sorted(a.status_code for a in answers) == [200, 409], [a.text for a in answers]
        won = next(a for a in answers if a.status_code == 200).json()
        lost = next(a for a in answers if a.status_code == 409).json()
        assert lost["error"] == "conflict"
        expiry = datetime.fromisoformat
        assert expiry(lost["expiresAt"]) == expiry(won["expiresAt"])
        claimed = await runtime.pool.fetchval(
            f"SELECT count(*) FROM {EVENTS_TABLE} WHERE topic = $1",
            "services.queues.claims:ReportClaim.Claimed",
        )
        assert claimed == 1
        # The winner holds it ("assigned to me"); the loser holds nothing.
        wait = {"minPosition": won["position"]}
        holder = first if won["claimedBy"] == "reviewer-1" else second
        other = second if holder == first else first
        mine = await http.get("/factory/claims/mine", params=wait, headers=auth(holder))
        assert [c["reportId"] for c in mine.json()["items"]] == [report_id]
        theirs = await http.get("/factory/claims/mine", params=wait, headers=auth(other))
        assert theirs.json()["items"] == []
        # Claim next finds nothing else waiting: 404, nothing recorded.
        before = await event_count(runtime)
        nothing = await http.post("/factory/queues/all/claims", headers=auth(other))
        assert nothing.status_code == 404, nothing.text
        assert await event_count(runtime) == before
        # The holder releases; the other then claims the next, which is this one.
        released = await http.delete(path, headers=auth(holder))
        assert released.status_code == 200, released.text
        wait = {"minPosition": released.json()["position"]}
        taken = await http.post("/factory/queues/all/claims", params=wait, headers=auth(other))
        assert taken.status_code == 201, taken.text
        assert taken.json()["reportId"] == report_id


async def test_claim_next_gives_two_reviewers_two_reports_at_once(
    runtime: Runtime,
    keys: RoleKeys,  # noqa: F811
) -> None:
    runtime.start_projections(["review_queues"])
    first, second = keys.by_role["Reviewer"], keys.second["Reviewer"]
    async with client_for(runtime, first) as http:
        await filed_at(http, keys.by_role["Requester"])
        await filed_at(http, keys.by_role["Requester"])
        defined = await http.put("/factory/queues/all", json={}, headers=auth(first))
        wait = {"minPosition": defined.json()["position"]}
        answers = await asyncio.gather(
            http.post("/factory/queues/all/claims", params=wait, headers=auth(first)),
            http.post("/factory/queues/all/claims", params=wait, headers=auth(second)),
        )
        assert [a.status_code for a in answers] == [201, 201], [a.text for a in answers]
        assert answers[0].json()["reportId"] != answers[1].json()["reportId"]


async def test_a_claim_expires_by_the_clock_and_is_then_anyone_s(runtime: Runtime) -> None:
    """D162: a claim holds for the queue's minutes from its time; after that another
    reviewer claims it and the read model counts it open again. Nothing runs at expiry."""
    report_id = await report(runtime, 1, T0)
    await define(runtime, "q", {"claimMinutes": 30})
    claim = ClaimReport(queue="q", report_id=report_id)
    await send(runtime, claim, "vera", "c1", T0, REVIEWER)
    with pytest.raises(Conflict):
        await send(runtime, claim, "vic", "c2", T0 + timedelta(minutes=29), REVIEWER)
    runner = await caught_up(runtime)
    early = await queue_progress(
        runtime.pool, "t1", "q", now=T0 + timedelta(minutes=10), day_start=T0, week_start=T0
    )
    assert early is not None
    assert (early.open, early.claimed) == (0, 1)
    late = await queue_progress(
        runtime.pool, "t1", "q", now=T0 + timedelta(minutes=30), day_start=T0, week_start=T0
    )
    assert late is not None
    assert (late.open, late.claimed) == (1, 0)
    assert await claims_held_by(runtime.pool, "t1", "vera", now=T0 + timedelta(minutes=31)) == []
    won = await send(runtime, claim, "vic", "c3", T0 + timedelta(minutes=30), REVIEWER)
    assert won.claimed_by == "vic"
    # Only the holder releases (D161): the report is vic's now, not vera's to give back.
    release = ReleaseClaim(report_id=report_id)
    with pytest.raises(NotPermitted):
        await send(runtime, release, "vera", "r1", T0 + timedelta(minutes=31), REVIEWER)
    await runner.catch_up()


async def test_progress_counts_open_claimed_done_and_oldest_and_a_rebuild_equals_live(
    runtime: Runtime,
) -> None:
    """D164: open and claimed of the queue's filter, done today and this week in the
    reader's zone, oldest waiting; the rebuilt read model holds what the live one does."""
    monday = T0 - timedelta(days=3)
    old = await report(runtime, 1, monday)
    answers = [await report(runtime, n, T0 + timedelta(minutes=n)) for n in (2, 3, 4)]
    idea = await report(runtime, 5, T0, category="idea")
    await define(runtime, "answers", {"filter": {"category": "answer"}, "claimMinutes": 60})
    await define(runtime, "stale", {"filter": {"minAgeHours": 48}})
    held = ClaimReport(queue="answers", report_id=answers[0])
    await send(runtime, held, "vera", "c", T0, REVIEWER)
    for n, (rid, at) in enumerate(((answers[1], T0), (old, monday))):
        for status in ("Triaged", "WontFix"):
            review = ReviewReport.model_validate({"status": status, "reason": "dup"})
            command = ReviewReportCommand(report_id=rid, review=review)
            await send(runtime, command, "vic", f"r{n}{status}", at)
    live = await caught_up(runtime)
    now = T0 + timedelta(minutes=30)  # within the claim's hour
    progress = await queue_progress(
        runtime.pool, "t1", "answers", now=now, day_start=T0 - timedelta(hours=9),
        week_start=monday - timedelta(hours=9),
    )  # fmt: skip
    assert progress is not None
    assert (progress.open, progress.claimed) == (1, 1)  # answers[2] open, answers[0] held
    assert (progress.done_today, progress.done_this_week) == (1, 2)
    assert progress.oldest_waiting == T0 + timedelta(minutes=4)
    assert await next_candidates(runtime.pool, "t1", "answers", now=now) == [answers[2]]
    stale = await next_candidates(runtime.pool, "t1", "stale", now=now)
    assert stale == []  # every open report is younger than 48 hours
    assert idea not in await next_candidates(runtime.pool, "t1", "answers", now=now)
    fresh = await rebuild(runtime.store, runtime.pool, ReviewQueues(), swap=False)
    for query in (
        "SELECT * FROM {}.queues ORDER BY queue_id",
        "SELECT * FROM {}.reports ORDER BY report_id",
        "SELECT * FROM {}.claims ORDER BY claim_id",
    ):
        assert [tuple(r) for r in await runtime.pool.fetch(query.format(fresh))] == [
            tuple(r) for r in await runtime.pool.fetch(query.format(live.schema))
        ]


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/factory/queues/q", {"claimMinutes": 0}, "claimMinutes"),
        ("/factory/queues/q", {"filter": {"kind": "nonsense"}}, "filter.kind"),
        ("/factory/queues/q", {"filter": {"status": "Resolved"}}, "filter.status"),
        ("/factory/queues/q", {"reviewers": "maria"}, "reviewers"),
        ("/factory/queues/q", {"colour": "red"}, "colour"),
        ("/factory/queues/bad%20name", {}, "queue"),
    ],
)
async def test_a_bad_queue_is_refused_naming_the_field_with_nothing_recorded(
    path: str,
    body: dict[str, Any],
    field: str,
    runtime: Runtime,
    keys: RoleKeys,  # noqa: F811
) -> None:
    async with client_for(runtime, keys.by_role["Reviewer"]) as http:
        before = await event_count(runtime)
        answer = await http.put(path, json=body)
        assert answer.status_code == 422, answer.text
        assert answer.json()["field"] == field, answer.json()
        assert await event_count(runtime) == before


async def test_a_bad_time_zone_or_claim_body_is_refused_naming_the_field(
    runtime: Runtime,
    keys: RoleKeys,  # noqa: F811
) -> None:
    async with client_for(runtime, keys.by_role["Reviewer"]) as http:
        before = await event_count(runtime)
        zone = await http.get("/factory/queues", params={"timeZone": "Mars/Olympus"})
        assert (zone.status_code, zone.json()["field"]) == (422, "timeZone"), zone.text
        claim = await http.put(
            "/factory/reports/8c7a1f0e-3b2d-4c5e-9f10-1a2b3c4d5e6f/claim", json={"queue": ""}
        )
        assert (claim.status_code, claim.json()["field"]) == (422, "queue"), claim.text
        assert await event_count(runtime) == before


async def test_feedbackloop_queues_progress_prints_each_queue_of_the_tenant(
    runtime: Runtime,
    database_url: str,
    keys: RoleKeys,  # noqa: F811
) -> None:
    runtime.start_projections(["review_queues"])
    reviewer = keys.by_role["Reviewer"]
    async with client_for(runtime, reviewer) as http:
        await filed_at(http, keys.by_role["Requester"])
        defined = await http.put("/factory/queues/all", json={}, headers=auth(reviewer))
        wait = {"minPosition": defined.json()["position"]}
        assert (await http.get("/factory/queues", params=wait)).status_code == 200
    tenant = runtime.keys.identify(reviewer)
    assert tenant is not None
    printed = await feedbackloop(
        database_url, "queues", "progress", "--tenant", tenant.tenant_id, "--time-zone",
        "Europe/Zurich",
    )  # fmt: skip
    assert "all" in printed
    assert "open 1" in printed
    assert "claimed 0" in printed
    assert "1 queues" in printed
