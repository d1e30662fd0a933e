"""My agents and Operations' failing webhooks in a browser (decisions D250–D257): a maintainer
sees, for the agent the register names them maintainer of and not for another, the report
addressed to its owner, its case failing in the last night, the proposal waiting for them and
its failing webhook, each linked to its page; a requester is refused the page; an operator
sees the failing webhook on Operations; an admin sees every agent.

The content is made as the service makes it: reports filed and a case lifted and confirmed
through the API, the night run by the nightly runner (its agent faults, W103) and the proposal
raised by the generator from failed evaluations, on the database the console's service reads;
the webhook's receiver answers 503."""

import asyncio
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import expect

from services.evals.runs import CaseRunner
from services.nightly.runner import NightlyRunner
from services.nightly.settings import NightlySettings
from services.processes.bootstrap import Runtime
from services.scheduling.orders import PlanNight
from tests.browser.conftest import Console, People, Person, Shots, accessible
from tests.browser.test_console_proposals import raise_proposals, register
from tests.browser.test_console_proposals import runtime as runtime
from tests.integration.test_owned_agents import Faulting
from tests.unit.test_wrong_answer import SEED_FACTS
from tests.webhook_endpoint import webhook_endpoint

pytestmark = pytest.mark.timeout(240)

COACH, WRITER = "owned-coach", "owned-writer"


@pytest.fixture
def failing_receiver() -> Iterator[str]:
    with webhook_endpoint(lambda body, headers: 503) as url:
        yield url


async def api(url: str, person: Person) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=url, headers={"Authorization": f"Bearer {person.key}"}, timeout=30
    )


async def filed(http: httpx.AsyncClient, agent: str, prompt: str) -> tuple[str, str]:
    """A wrong-answer report of ``agent`` (Kind not-found: its owner's), filed and submitted."""
    facts = {**SEED_FACTS, "prompt": prompt, "reply": {**SEED_FACTS["reply"], "agentName": agent}}
    drafted = await http.post("/factory/reports/wrong-answer", json=facts)
    assert drafted.status_code == 201, drafted.text
    report_id: str = drafted.json()["reportId"]
    submitted = await http.post(f"/factory/reports/{report_id}/submit")
    assert submitted.status_code == 200, submitted.text
    return report_id, submitted.json()["position"]


async def failing_night(runtime: Runtime, tenant: str, tmp_path: Path) -> None:
    """The night, as the scheduler's PlanNight runs it, with an agent that faults."""
    catalogue = tmp_path / "models.toml"
    catalogue.write_text('[models."eu-1"]\nresidency = "eu"\n')
    nightly = NightlySettings(enabled=True, model="eu-1", catalogue=catalogue)
    cases = CaseRunner(runtime.store, runtime.bus, Faulting(), default_model=None, thresholds={})
    order = PlanNight(date=date.today(), now=datetime.now(UTC))
    runner = NightlyRunner(
        runtime.store, runtime.bus, runtime.pool, cases, nightly, read_wait_seconds=30
    )
    await runner(order)


async def until(check: Any, seconds: float = 60) -> None:
    async with asyncio.timeout(seconds):
        while not await check():
            await asyncio.sleep(0.2)


async def test_a_maintainer_sees_what_waits_for_their_agent_and_operations_its_failing_webhook(
    console: Console,
    people: People,
    runtime: Runtime,
    shots: Shots,
    failing_receiver: str,
    tmp_path: Path,
) -> None:
    tenant = people.maintainer.tenant
    await register(console.url, people, COACH, "mia")
    await register(console.url, people, WRITER, "someone-else")
    async with await api(console.url, people.maintainer) as as_mia:
        hooked = await as_mia.put(
            f"/factory/agents/{COACH}/webhook", json={"url": f"{failing_receiver}/in"}
        )
        assert hooked.status_code == 200, hooked.text
        async with await api(console.url, people.requester) as as_rob:
            report, _ = await filed(as_rob, COACH, "Welchen Stundenansatz verrechne ich?")
            await filed(as_rob, WRITER, "Wer schreibt den Bericht?")
        lifted = await as_mia.post(f"/factory/reports/{report}/lift")
        assert lifted.status_code == 201, lifted.text
        case_id = lifted.json()["caseId"]
        confirmed = await as_mia.post(
            f"/factory/evals/cases/{case_id}/confirm", json={"confirmed": True}
        )
        assert confirmed.status_code == 200, confirmed.text
        seen = await as_mia.get(
            f"/factory/evals/cases/{case_id}",
            params={"minPosition": confirmed.json()["position"]},
        )
        assert seen.status_code == 200, seen.text
        await failing_night(runtime, tenant, tmp_path)
        [proposal] = await raise_proposals(runtime, tenant, (COACH,))

        async def everything_shown() -> bool:
            answer = await as_mia.get("/factory/owners/agents")
            [coach] = answer.json()["items"]
            return bool(
                coach["night"] and coach["night"]["failing"] and coach["proposals"]["waiting"]
                and coach["webhook"] and coach["webhook"]["failing"]
            )  # fmt: skip

        await until(everything_shown)

    mia = await console.signed_in(people.maintainer)
    await mia.get_by_role("navigation", name="Pages").get_by_role("link", name="My agents").click()
    await expect(mia.locator("h1")).to_have_text("My agents")
    section = mia.get_by_role("region", name=COACH)
    await expect(section).to_be_visible()
    await expect(mia.get_by_role("region", name=WRITER)).to_have_count(0)  # not hers
    reports = section.get_by_role("table", name=f"Open reports addressed to the owner of {COACH}")
    await expect(reports).to_contain_text("not-found")
    await expect(reports).to_contain_text("New")
    cases = section.get_by_role("table", name=f"Cases of {COACH} failing in the night")
    await expect(cases).to_contain_text("agent exploded")
    proposals = section.get_by_role("table", name=f"Proposals for {COACH} waiting")
    await expect(proposals).to_contain_text("someone to pick it up")
    await expect(section).to_contain_text("Webhook: failing: HTTP 503")
    await expect(cases.get_by_role("link")).to_have_attribute("href", f"/eval-cases/{case_id}")
    await expect(proposals.get_by_role("link")).to_have_attribute("href", f"/proposals/{proposal}")
    await shots.take(mia, "my-agents")
    await accessible(mia)
    # A cursor that is not this list's: the API's 422 naming `before`, said on the page.
    bad = await mia.goto("/my-agents?before=not-a-cursor")
    assert bad is not None
    assert bad.status == 422
    await expect(mia.get_by_role("alert")).to_contain_text("before")
    await shots.take(mia, "my-agents-bad-cursor")
    await accessible(mia)
    await mia.goto("/my-agents")
    await reports.get_by_role("link").click()  # the report's own page
    await expect(mia).to_have_url(f"{console.url}/inbox/{report}")
    await expect(mia.locator("h1")).to_be_visible()

    # A requester is refused the page (the API's rule, D250); the audit has the row (D110).
    rob = await console.signed_in(people.requester)
    refused = await rob.goto("/my-agents")
    assert refused is not None
    assert refused.status == 403

    # The admin sees every agent of the tenant.
    ada = await console.signed_in(people.admin)
    await ada.goto("/my-agents")
    await expect(ada.get_by_role("region", name=WRITER)).to_be_visible()
    await expect(ada.get_by_role("region", name=COACH)).to_be_visible()
    await shots.take(ada, "my-agents-admin")
    await accessible(ada)

    # Operations: the operator sees the failing webhook (D257).
    otto = await console.signed_in(people.operator)
    await otto.goto("/operations")
    failing = otto.get_by_role("table", name="This tenant's agents' webhooks whose latest")
    await expect(failing.get_by_role("row", name=COACH)).to_contain_text("HTTP 503")
    await expect(failing).not_to_contain_text(WRITER)
    await otto.get_by_role("heading", name="Agents' webhooks").scroll_into_view_if_needed()
    await shots.take(otto, "operations-webhooks")
    await accessible(otto)
