"""A night that re-ran a changed agent's cases first, in a browser (decisions D242): an
observer opens the night and reads, on the case's line and in the selected cases, what changed
of the agent, and in the note how many of its cases ran first.

Made as the service makes it: two cases confirmed through the API by their maintainer, a first
night running both, the registry's AgentChanged of the coach decided on the bus, and the next
night (a cap of one) planned and run by the nightly runner."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from playwright.async_api import expect

from contracts.agent_changes import AgentChanged
from services.bus.issued import Issued
from services.evals.agents import HttpAgentClient
from services.evals.runs import CaseRunner
from services.nightly.runner import NightlyRunner
from services.nightly.settings import NightlySettings
from services.scheduling.orders import PlanNight
from tests.browser.conftest import Console, People, Shots, accessible
from tests.browser.test_console_nights import (
    COACH,
    MODEL,
    WRITER,
    Scheduled,
    lifted_and_confirmed,
    night_read,
    registered,
    submitted,
)
from tests.browser.test_console_nights import scheduled as scheduled  # fixtures of that module
from tests.browser.test_console_nights import standin as standin
from tests.browser.test_console_nights import webhook as webhook

pytestmark = pytest.mark.timeout(300)

REASON = "re-run first: model changed eu-0 → eu-1 at 2026-12-04T10:00:00+00:00"


def nightly_runner(scheduled: Scheduled, cap: int) -> NightlyRunner:
    runtime = scheduled.runtime
    agent = HttpAgentClient(scheduled.standin)
    cases = CaseRunner(runtime.store, runtime.bus, agent, default_model=None, thresholds={})
    nightly = NightlySettings(
        enabled=True, model=MODEL, catalogue=scheduled.catalogue, max_cases=cap,
        conversations_per_case=1,
    )  # fmt: skip
    return NightlyRunner(
        runtime.store, runtime.bus, runtime.pool, cases, nightly, read_wait_seconds=30
    )


async def a_night_after_a_change(scheduled: Scheduled, people: People, url: str) -> str:
    tenant = people.observer.tenant
    now = datetime.now(UTC)
    for agent in (COACH, WRITER):
        await registered(url, people.admin.key, agent, people.maintainer.subject)
        report = await submitted(scheduled, tenant, now, agent, "Welchen Stundenansatz?")
        await lifted_and_confirmed(url, people.maintainer.key, report)
    yesterday = now - timedelta(days=1)
    await nightly_runner(scheduled, 2)(PlanNight(date=yesterday.date(), now=yesterday))
    await night_read(url, people.observer, yesterday.date().isoformat())
    change = AgentChanged.model_validate(
        {"agent": COACH, "what": "model", "from": "eu-0", "to": "eu-1",
         "at": "2026-12-04T10:00:00Z"}
    )  # fmt: skip
    await scheduled.runtime.bus.execute(
        Issued(change, tenant, "urn:registry", uuid.uuid4().hex, datetime.now(UTC))
    )
    await nightly_runner(scheduled, 1)(PlanNight(date=now.date(), now=now))
    await night_read(url, people.observer, now.date().isoformat())
    return now.date().isoformat()


async def test_an_observer_reads_why_a_changed_agents_case_ran_first(
    console: Console, people: People, scheduled: Scheduled, shots: Shots
) -> None:
    night = await a_night_after_a_change(scheduled, people, console.url)
    observer = await console.signed_in(people.observer)
    await observer.goto("/nights")
    await expect(observer.get_by_text("its cases run first")).to_be_visible()
    await observer.get_by_role("link", name=night).click()
    await expect(observer.locator("h1")).to_contain_text(f"Night of {night}")

    lines = observer.get_by_role("table", name="One line per case: what became of it this night")
    ran = lines.get_by_role("row").filter(has=observer.locator(".outcome-ran"))
    await expect(ran).to_have_count(1)
    await expect(ran).to_contain_text("_Evals/AgenticOffice_Agent_OfficeCoach")
    await expect(ran.locator(".rerun")).to_have_text(REASON)
    over = lines.get_by_role("row").filter(has_text="over the night's cap")
    await expect(over).to_contain_text("_Evals/AgenticOffice_Agent_Writer")
    await expect(over.locator(".rerun")).to_have_count(0)  # the writer did not change

    selected = observer.get_by_role("table", name="What the night set out to run", exact=False)
    await expect(selected.get_by_role("row").nth(1)).to_contain_text(REASON)
    note = observer.locator("#note + blockquote")
    await expect(note).to_contain_text(f"re-run first after a change of {COACH}: 1 selected")
    await shots.take(observer, "night-rerun")
    await accessible(observer)
