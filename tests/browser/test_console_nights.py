"""Nights and weekly digests in a browser: an observer opens the tenant's nights, a night with
its lines and note, the weeks, and a digest with its tables, its trend as a sparkline and what
was posted where (SPEC W87–W90, W115–W124, W137; decisions D83–D85).

The content is made as the scheduler makes it: reports submitted on the bus at times of the
weeks before this one, two cases lifted and confirmed through the API by the maintainer, and
the nightly runner and the digest builder carried out with the orders' own time (PlanNight,
BuildDigest), on the database the console's service reads."""

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import expect

from contracts.nights import FinishNight, PlanTenantNight
from contracts.reports import ComposeWrongAnswer, SubmitReport
from contracts.weeks import due_at
from services.bus.issued import Issued
from services.evals.agents import HttpAgentClient
from services.evals.runs import CaseRunner
from services.nightly.domain import night_id
from services.nightly.runner import NightlyRunner
from services.nightly.settings import NightlySettings
from services.processes.bootstrap import Runtime
from services.processes.settings import Settings
from services.scheduling.orders import BuildDigest, PlanNight
from tests.browser.conftest import Console, People, Person, Shots, accessible
from tests.github_standin import GitHubStandin, github_standin
from tests.standin import standin_agent
from tests.unit.test_wrong_answer import SEED_FACTS
from tests.webhook_endpoint import webhook_endpoint

# A night with the stand-in agent, two digests, their delivery and their intake come before
# the pages: more than the suite's two minutes on a busy machine.
pytestmark = pytest.mark.timeout(300)

TOKEN = "ghp_standin_token_of_tenant_a"
SECRET = "digest-webhook-secret"
REPOSITORY = "acme/office-coach"
COACH = "AgenticOffice/Agent/OfficeCoach"
WRITER = "AgenticOffice/Agent/Writer"
MODEL = "eu-1"
SCRIPT = {
    "modelName": MODEL,
    "rules": [
        {
            "when": "Stundenansatz",
            "text": "Konzept-Ansatz CHF 150 steht im Firmenprofil.",
            "toolCalls": [
                {"name": "Get", "arguments": "sglauser/AgenticOffice/Firmenprofil",
                 "result": "CHF 150"}
            ],
        }
    ],
    "default": {"text": "I don't know."},
}  # fmt: skip


def iso_week(day: datetime) -> str:
    iso = day.isocalendar()
    return f"{iso.year}-W{iso.week:02d}"


@pytest.fixture
def standin(tmp_path: Path) -> Iterator[str]:
    with standin_agent(SCRIPT, tmp_path) as url:
        yield url


@pytest.fixture
def tracker() -> Iterator[GitHubStandin]:
    with github_standin(TOKEN, {REPOSITORY}) as standin:
        yield standin


@pytest.fixture
def webhook() -> Iterator[str]:
    with webhook_endpoint(lambda body, headers: 204) as url:
        yield url


@pytest.fixture
def console_env(people: People, tracker: GitHubStandin, webhook: str) -> dict[str, str]:
    """The console's service delivers the posts to the hand-over webhook and takes them into
    tenant A's tracker (the triage intake), as a deployment with both configured does."""
    return {
        "FEEDBACKLOOP_HANDOVER_WEBHOOK_URL": webhook,
        "FEEDBACKLOOP_HANDOVER_WEBHOOK_SECRET": SECRET,
        "FEEDBACKLOOP_TRACKERS": json.dumps(
            {people.observer.tenant: {"url": tracker.url, "token": TOKEN}}
        ),
        "FEEDBACKLOOP_TRACKER_BACKOFF_SECONDS": "0.2",
    }


@dataclass
class Scheduled:
    """The service's parts in this process, on the console's database: what the scheduler
    orders is carried out here with the orders' own time."""

    runtime: Runtime
    keys_file: Path
    catalogue: Path
    standin: str


@pytest.fixture
async def scheduled(
    database_url: str,
    people: People,
    console_url: str,
    standin: str,
    webhook: str,
    tmp_path: Path,
) -> AsyncIterator[Scheduled]:
    keys_file = tmp_path / "keys.json"
    keys_file.write_text(people.entries)
    catalogue = tmp_path / "models.toml"
    catalogue.write_text(f'[models."{MODEL}"]\nresidency = "eu"\n')
    settings = Settings(
        database_url=database_url,
        api_keys=people.entries,
        read_wait_seconds=30,
        handover_webhook_url=webhook,
        handover_webhook_secret=SECRET,
    )  # the console's service runs the read models; this process only decides and appends
    runtime = await Runtime.open(settings)
    try:
        yield Scheduled(runtime, keys_file, catalogue, standin)
    finally:
        await runtime.close()


async def submitted(
    scheduled: Scheduled, tenant: str, at: datetime, agent: str, prompt: str
) -> str:
    """A wrong-answer report of ``agent``, composed and submitted at ``at`` by rob."""
    reply = {**SEED_FACTS["reply"], "agentName": agent, "modelName": MODEL}
    compose = ComposeWrongAnswer.model_validate({**SEED_FACTS, "reply": reply, "prompt": prompt})
    bus = scheduled.runtime.bus
    state = (await bus.execute(Issued(compose, tenant, "rob", uuid.uuid4().hex, at))).result
    submit = SubmitReport(report_id=state.report_id)
    await bus.execute(Issued(submit, tenant, "rob", uuid.uuid4().hex, at))
    return str(state.report_id)


async def lifted_and_confirmed(url: str, key: str, report_id: str) -> None:
    """The maintainer makes the report a case and confirms it, through the API."""
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as http:
        lifted = await http.post(f"/factory/reports/{report_id}/lift")
        assert lifted.status_code == 201, lifted.text
        case_id = lifted.json()["caseId"]
        confirmed = await http.post(
            f"/factory/evals/cases/{case_id}/confirm",
            json={"confirmed": True},
        )
        assert confirmed.status_code == 200, confirmed.text


async def registered(
    url: str, admin: str, agent: str, maintainer: str, repository: str | None = None
) -> None:
    """The agent's maintainer in the register (only they confirm its cases, decisions D77) and
    its repository, where its standing issue is filed (none: its items go unrouted)."""
    headers = {"Authorization": f"Bearer {admin}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as http:
        body: dict[str, Any] = {"maintainers": [maintainer]}
        if repository is not None:
            body["repository"] = repository
        answer = await http.put(f"/factory/agents/{agent}", json=body)
        assert answer.status_code in (200, 201), answer.text


async def taken_in(url: str, person: Person, weeks: list[str]) -> None:
    """Until the webhook's deliveries and the triage intake's items are in the read model:
    both happen in the service's own readers, after the posts."""
    headers = {"Authorization": f"Bearer {person.key}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as http:
        for _ in range(300):
            last = await http.get(f"/factory/feedback/digests/{weeks[-1]}")  # 404 until read
            ledger = (await http.get("/factory/feedback/standing-issues")).json()["items"]
            taken = sum(standing["digests"] for standing in ledger)
            deliveries = last.json()["posted"]["deliveries"] if last.status_code == 200 else {}
            delivered = [d for d in deliveries.values() if d == "delivered"]
            if len(delivered) == 2 and taken == 3:
                return
            await asyncio.sleep(0.2)
    raise AssertionError(f"not delivered or not taken in: {last.text}, {ledger}")


async def night_read(url: str, person: Person, night: str) -> None:
    """Until the nights' read model has the night as it ended (the service's reader)."""
    headers = {"Authorization": f"Bearer {person.key}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as http:
        for _ in range(300):
            read = await http.get(f"/factory/evals/nights/{night}")
            if read.status_code == 200 and read.json()["finishedAt"]:
                return
            await asyncio.sleep(0.2)
    raise AssertionError(f"the night is not read yet: {read.text}")


async def night_and_digests(scheduled: Scheduled, people: People, url: str) -> dict[str, Any]:
    """Three weeks of reports, two confirmed cases, tonight's night (a cap of one case: the
    other is over it) and the digests of the two weeks before this one, posted to the
    webhook and taken into the coach's standing issue."""
    tenant = people.observer.tenant
    await registered(url, people.admin.key, COACH, people.maintainer.subject, REPOSITORY)
    await registered(url, people.admin.key, WRITER, people.maintainer.subject)
    now = datetime.now(UTC)
    monday = datetime.combine(
        date.fromisocalendar(*now.isocalendar()[:2], 1), datetime.min.time(), UTC
    )
    weeks = [iso_week(monday - timedelta(weeks=n)) for n in (2, 1)]

    def day_of(weeks_ago: int, day: int) -> datetime:
        return monday - timedelta(weeks=weeks_ago) + timedelta(days=day, hours=9)

    await submitted(scheduled, tenant, day_of(3, 1), COACH, "Stundenansatz?")
    coach = await submitted(
        scheduled, tenant, day_of(2, 2), COACH, "Welchen Stundenansatz verrechne ich?"
    )
    for n in range(3):
        await submitted(scheduled, tenant, day_of(1, n), COACH, f"Rate {n}?")
    writer = await submitted(scheduled, tenant, day_of(1, 3), WRITER, "Write my offer")
    await lifted_and_confirmed(url, people.maintainer.key, coach)
    await lifted_and_confirmed(url, people.maintainer.key, writer)

    runtime = scheduled.runtime
    agent = HttpAgentClient(scheduled.standin)
    cases = CaseRunner(runtime.store, runtime.bus, agent, default_model=None, thresholds={})
    nightly = NightlySettings(
        enabled=True, model=MODEL, catalogue=scheduled.catalogue, max_cases=1,
        conversations_per_case=2,
    )  # fmt: skip
    runner = NightlyRunner(
        runtime.store, runtime.bus, runtime.pool, cases, nightly, read_wait_seconds=30
    )
    await runner(PlanNight(date=now.date(), now=now))
    builder = runtime.digest_builder()
    for week in weeks:
        await builder.run(BuildDigest(week=week, now=due_at(week)))
    await taken_in(url, people.observer, weeks)
    await night_read(url, people.observer, now.date().isoformat())
    return {"night": now.date().isoformat(), "weeks": weeks}


async def test_an_observer_reads_the_nights_and_a_digest(
    console: Console, people: People, scheduled: Scheduled, tracker: GitHubStandin, shots: Shots
) -> None:
    made = await night_and_digests(scheduled, people, console.url)
    observer = await console.signed_in(people.observer)
    nav = observer.get_by_role("navigation", name="Pages")
    await nav.get_by_role("link", name="Nights").click()
    await expect(observer.get_by_role("heading", name="Nights")).to_be_visible()
    row = observer.get_by_role("row").filter(has_text=made["night"])
    await expect(row).to_contain_text("Succeeded")
    await shots.take(observer, "nights")
    await accessible(observer)

    await row.get_by_role("link", name=made["night"]).click()
    await expect(observer.locator("h1")).to_contain_text(f"Night of {made['night']}")
    lines = observer.get_by_role("table", name="One line per case: what became of it this night")
    over = lines.get_by_role("row").filter(has_text="over the night's cap")
    await expect(over).to_have_count(1)
    await expect(over).to_contain_text("_Evals/AgenticOffice_Agent_")  # its ref, not its id
    ran = lines.get_by_role("row").filter(has=observer.locator(".outcome-ran"))
    await expect(ran).to_have_count(1)
    await expect(ran).to_contain_text(MODEL)
    await expect(observer.locator("#note + blockquote")).not_to_be_empty()
    await shots.take(observer, "night")
    await accessible(observer)

    await nav.get_by_role("link", name="Digests").click()
    last, before = made["weeks"][1], made["weeks"][0]
    weeks = observer.get_by_role("table", name="The weeks with a digest, newest first")
    await expect(weeks.get_by_role("row").nth(1)).to_contain_text(last)
    await expect(weeks.get_by_role("row").nth(2)).to_contain_text(before)
    await shots.take(observer, "weeks")
    await accessible(observer)

    await weeks.get_by_role("link", name=last).click()
    await expect(observer.locator("h1")).to_contain_text(f"Digest of {last}")
    agents = observer.get_by_role("table", name="Each agent's week", exact=False)
    coach = agents.get_by_role("row").filter(has_text=COACH)
    await expect(coach).to_contain_text("+2 on the week before (1)")
    spark = coach.get_by_role("img")
    await expect(spark).to_have_attribute(
        "aria-label", f"Reports a week of {COACH}: {made['weeks'][0]} 1, {last} 3"
    )
    posted = observer.get_by_role(
        "table", name="Each agent's post and the standing issue it went into"
    )
    await expect(posted).to_contain_text(COACH)
    models = observer.get_by_role("table", name="Across agents: each model's reports by kind")
    await expect(models).to_contain_text(MODEL)
    await shots.take(observer, "digest")
    await accessible(observer)


async def a_month_of_nights(scheduled: Scheduled, people: People, url: str) -> None:
    """October's nights, planned and finished as the nightly runner does, each with nothing
    selected: one more than a page."""
    tenant = people.observer.tenant
    bus = scheduled.runtime.bus
    for day in range(1, 32):
        at = datetime(2026, 10, day, 1, tzinfo=UTC)
        plan = PlanTenantNight(
            date=at.date(), now=at, inputs={}, selected=[], lines=[], note="nothing confirmed"
        )
        await bus.execute(Issued(plan, tenant, "system:nightly", uuid.uuid4().hex, at))
        finish = FinishNight(night_id=night_id(tenant, at.date().isoformat()))
        await bus.execute(Issued(finish, tenant, "system:nightly", uuid.uuid4().hex, at))
    headers = {"Authorization": f"Bearer {people.observer.key}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as http:
        for _ in range(300):
            last = await http.get("/factory/evals/nights/2026-10-31")
            if last.status_code == 200 and last.json()["status"] == "Succeeded":
                return
            await asyncio.sleep(0.2)
    raise AssertionError(f"the nights are not read yet: {last.text}")


async def test_an_observer_pages_back_through_the_nights_and_a_requester_is_refused_them(
    console: Console, people: People, scheduled: Scheduled, shots: Shots
) -> None:
    await a_month_of_nights(scheduled, people, console.url)
    observer = await console.signed_in(people.observer)
    await observer.goto("/nights")
    nights = observer.get_by_role("table", name="The nights, newest first")
    await expect(nights.get_by_role("row")).to_have_count(1 + 30)
    await expect(nights.get_by_role("row").nth(1)).to_contain_text("2026-10-31")
    await expect(nights).not_to_contain_text("2026-10-01")
    pager = observer.get_by_role("navigation", name="Pages of nights")
    await pager.get_by_role("link", name="Older").click()
    await expect(nights.get_by_role("row")).to_have_count(1 + 1)
    await expect(nights).to_contain_text("2026-10-01")
    await expect(pager.get_by_role("link", name="Older")).to_have_count(0)
    await shots.take(observer, "older-nights")
    await accessible(observer)
    await pager.get_by_role("link", name="Newest").click()
    await expect(nights.get_by_role("row")).to_have_count(1 + 30)

    for path, status in (
        ("/nights/2026-02-30", 422),
        ("/digests/2026-W54", 422),
        ("/nights?before=forged", 422),
        ("/nights/2020-01-01", 404),
        ("/digests/2020-W01", 404),
    ):
        answer = await observer.goto(path)
        assert answer is not None, path
        assert answer.status == status, (path, answer.status)
    await expect(observer.get_by_role("heading", name="Not found")).to_be_visible()
    quiet = await observer.goto("/digests")
    assert quiet is not None
    assert quiet.status == 200
    await expect(observer.get_by_text("No week has a digest for this tenant")).to_be_visible()
    await accessible(observer)

    other = await console.signed_in(people.other_tenant)  # tenant B sees none of A's nights
    await other.goto("/nights")
    await expect(other.get_by_text("No night has run for this tenant")).to_be_visible()
    foreign = await other.goto("/nights/2026-10-31")
    assert foreign is not None
    assert foreign.status == 404

    requester = await console.signed_in(people.requester)
    nav = requester.get_by_role("navigation", name="Pages")
    await expect(nav.get_by_role("link", name="Nights")).to_have_count(0)
    await expect(nav.get_by_role("link", name="Digests")).to_have_count(0)
    for path in ("/nights", "/nights/2026-10-31", "/digests"):
        answer = await requester.goto(path)
        assert answer is not None, path
        assert answer.status == 403, path
    await expect(requester.locator("main")).not_to_contain_text("2026-10-31")
    await shots.take(requester, "requester-refused")
