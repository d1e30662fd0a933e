"""The Proposals page in a browser: a maintainer of the proposal's target picks it up and rejects
it — refused without a reason, the refusal shown on the page — then with one; another accepts
and records the Draft release; an observer reads but is offered nothing to do (SPEC C32–C36,
C52; decisions D23, D62, D86–D88).

The proposal is raised as the service raises it: three failed evaluations of the agent reach
the bus as the Kafka door hands them over, then the generator runs the day's order
(``tests/integration/test_learning.py`` does the same). The service under test runs the read
models; the generator here waits for them, as the scheduler's does.
"""

import asyncio
import re
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from playwright.async_api import expect

from contracts.neighbours import EvaluationCompleted
from services.bus.issued import Issued
from services.console.pages.proposals import PAGE_SIZE
from services.followers.waiting import wait_for_position
from services.kafka.inbound.parsing import identity
from services.learning.generator import ProposalGenerator
from services.learning.settings import LearningSettings
from services.processes.bootstrap import Runtime
from services.processes.settings import Settings
from services.scheduling.orders import RaiseProposals
from tests.browser.conftest import Console, People, Shots, accessible
from tests.browser.test_console_inbox import csrf_of, reaches_by_keyboard

AGENT = "billing-agent"
READ_MODEL = "rm_learning_proposals"


@pytest.fixture
async def runtime(console_url: str, database_url: str, people: People) -> AsyncIterator[Runtime]:
    """The service's parts beside the one under test, on its database (nothing started)."""
    opened = await Runtime.open(
        Settings(database_url=database_url, api_keys=people.entries, read_wait_seconds=20)
    )
    yield opened
    await opened.close()


def failed_evaluation(n: int, target: str = AGENT) -> EvaluationCompleted:
    at = datetime.now(UTC) - timedelta(hours=n + 1)
    return EvaluationCompleted.model_validate(
        {
            "evaluationId": f"eval-{n}",
            "targetAssetId": target,
            "targetVersion": "1.4",
            "passed": False,
            "gates": [{"name": "expense-limits", "passed": False, "metric": "exact-match",
                       "value": 0.4, "threshold": 0.9}],
            "completedAt": at.isoformat(),
        }
    )  # fmt: skip


async def caught_up(runtime: Runtime) -> None:
    """The service's learning read model has every event of the store."""
    head = await asyncio.to_thread(runtime.store.recorder.max_notification_id) or 0
    assert await wait_for_position(runtime.pool, READ_MODEL, head, 30) >= head


async def raise_proposals(
    runtime: Runtime, tenant: str, targets: tuple[str, ...] = (AGENT,), evidence: int = 3
) -> list[str]:
    """``evidence`` failed evaluations of each target (C39), then the day's order (C42), with
    MinEvidenceItems at ``evidence`` (C47): a proposal per target."""
    now = datetime.now(UTC)
    for n, target in enumerate(t for t in targets for _ in range(evidence)):
        event = failed_evaluation(n, target)
        source, event_id = "urn:quality", f"ce-{uuid.uuid4().hex}"
        await runtime.bus.execute(
            Issued(event, tenant, source, f"ce/{source}/{event_id}", now,
                   identity=identity(tenant, source, event_id))
        )  # fmt: skip
    generator = ProposalGenerator(
        runtime.store,
        runtime.bus,
        runtime.pool,
        settings=lambda: LearningSettings.from_environ(
            {"FEEDBACKLOOP_LEARNING_MIN_EVIDENCE_ITEMS": str(evidence)}
        ),
    )
    report = await generator.run(RaiseProposals(now.date(), now))
    assert len(report.raised) == len(targets), report
    await caught_up(runtime)
    return [str(raised) for raised in report.raised]


async def register(url: str, people: People, agent: str = AGENT, maintainer: str = "mia") -> None:
    """The admin names the agent's maintainer in the register (decisions D25)."""
    headers = {"Authorization": f"Bearer {people.admin.key}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as http:
        done = await http.put(f"/factory/agents/{agent}", json={"maintainers": [maintainer]})
        assert done.status_code == 200, done.text


async def test_a_maintainer_rejects_a_proposal_refused_without_a_reason_then_with_one(
    console: Console, people: People, runtime: Runtime, shots: Shots
) -> None:
    await register(console.url, people)
    [proposal_id] = await raise_proposals(runtime, people.maintainer.tenant)

    mia = await console.signed_in(people.maintainer)
    await mia.goto("/proposals")
    row = mia.get_by_role("row").filter(has_text=AGENT)
    await expect(row).to_contain_text("Proposed")
    await expect(row).to_contain_text("exact-match")
    await shots.take(mia, "proposals")
    await accessible(mia)

    await expect(row.get_by_role("link")).to_have_attribute("href", f"/proposals/{proposal_id}")
    await row.get_by_role("link").click()
    evidence = mia.get_by_role("table", name="The facts the proposal stands on")
    await expect(evidence).to_contain_text("failed-evaluation")
    await expect(mia.locator(".summary")).to_contain_text("evaluation:eval-0")
    await expect(mia.locator(".steps")).to_contain_text("raised it")
    await reaches_by_keyboard(mia, "Pick up")
    await mia.keyboard.press("Enter")  # the Pick up button, by keyboard
    await expect(mia.locator("h1")).to_contain_text("InReview")
    await expect(mia.locator(".steps")).to_contain_text("mia picked it up")
    await shots.take(mia, "picked-up")
    await accessible(mia)

    # SPEC C33: no reason, no reject; the refusal is said on the page, nothing is decided.
    async with mia.expect_response(lambda answer: answer.url.endswith("/decide")) as decided:
        await mia.get_by_role("button", name="Reject").click()
    assert (await decided.value).status == 422  # the API's status for the same refusal
    refusal = mia.get_by_role("alert")
    await expect(refusal).to_contain_text("Rejecting a proposal requires a reason")
    await expect(mia.locator("h1")).to_contain_text("InReview")
    await shots.take(mia, "refused-without-reason")
    await accessible(mia)

    await mia.get_by_label("Reason").fill("The limit lives in the policy, not in the prompt.")
    await mia.get_by_role("button", name="Reject").click()
    await expect(mia.locator("h1")).to_contain_text("Rejected")
    await expect(mia.locator(".steps")).to_contain_text(
        "mia rejected it: The limit lives in the policy, not in the prompt."
    )
    await expect(mia.get_by_role("button", name="Reject")).to_have_count(0)
    await shots.take(mia, "rejected")

    await mia.goto("/proposals?state=Rejected")
    await expect(mia.get_by_role("row").filter(has_text=AGENT)).to_contain_text("Rejected")
    await mia.goto("/proposals?state=Proposed")
    await expect(mia.get_by_text("No proposal with these filters")).to_be_visible()


async def test_an_accepted_proposal_shows_the_release_it_produced_and_an_observer_only_reads(
    console: Console, people: People, runtime: Runtime, shots: Shots
) -> None:
    await register(console.url, people)
    [proposal_id] = await raise_proposals(runtime, people.maintainer.tenant)

    mia = await console.signed_in(people.maintainer)
    await mia.goto(f"/proposals/{proposal_id}")
    await mia.get_by_role("button", name="Pick up").click()
    await expect(mia.locator("h1")).to_contain_text("InReview")
    await mia.get_by_role("button", name="Accept").click()
    # Decisions D54: accepted, it waits for the Draft release the registry opens.
    await expect(mia.locator(".steps")).to_contain_text("mia accepted it")
    await expect(mia.get_by_role("group", name="Record the Draft release")).to_be_visible()
    await mia.get_by_label("Release id").fill("release-77")
    await mia.get_by_role("button", name="Record the release").click()
    await expect(mia.locator("h1")).to_contain_text("Accepted")
    await expect(mia.locator(".steps")).to_contain_text("its Draft release release-77 recorded")
    await shots.take(mia, "accepted-with-release")
    await accessible(mia)

    olga = await console.signed_in(people.observer)
    await olga.goto(f"/proposals/{proposal_id}")
    await expect(olga.locator("h1")).to_contain_text("Accepted")
    for action in ("Pick up", "Accept", "Reject", "Record the release"):
        await expect(olga.get_by_role("button", name=action)).to_have_count(0)
    forged = await olga.request.post(
        f"/proposals/{proposal_id}/release",
        form={"csrf": await csrf_of(olga), "release": "release-99"},
    )
    assert forged.status == 403  # D61: the command's role rule, whatever the page offers
    await olga.reload()
    await expect(olga.locator(".steps")).not_to_contain_text("release-99")

    rob = await console.signed_in(people.requester)  # D23: a Requester reads only their own
    answer = await rob.goto(f"/proposals/{proposal_id}")
    assert answer is not None
    assert answer.status == 403


async def test_the_list_is_paged_filtered_in_the_url_and_kept_to_its_tenant(
    console: Console, people: People, runtime: Runtime, shots: Shots
) -> None:
    targets = tuple(f"agent-{n:02d}" for n in range(PAGE_SIZE + 1))
    raised = await raise_proposals(runtime, people.maintainer.tenant, targets, evidence=1)

    olga = await console.signed_in(people.observer)
    await olga.goto("/proposals")
    rows = olga.get_by_role("row").filter(has=olga.get_by_role("link"))
    await expect(rows).to_have_count(PAGE_SIZE)
    first_page = await rows.get_by_role("link").all_inner_texts()
    await olga.get_by_role("link", name="Next page").click()
    await expect(rows).to_have_count(1)
    rest = await rows.get_by_role("link").all_inner_texts()
    assert sorted(first_page + rest) == sorted(f"{target} 1.4" for target in targets)
    await expect(olga.get_by_role("link", name="First page")).to_be_visible()
    await expect(olga.get_by_role("link", name="Next page")).to_have_count(0)
    await shots.take(olga, "second-page")
    await accessible(olga)

    await olga.get_by_label("Target").fill("agent-07")
    await olga.get_by_label("State").select_option("Proposed")
    await olga.get_by_role("button", name="Filter").click()
    await expect(olga).to_have_url(re.compile(r"state=Proposed.*target=agent-07"))
    await expect(rows).to_have_count(1)
    await expect(rows).to_contain_text("agent-07")

    answer = await olga.goto("/proposals?state=Approved")
    assert answer is not None
    assert answer.status == 422  # not a state of C34: refused, not an empty list

    # The register names tom, not mia, maintainer of agent-00: her pick-up is refused (D23).
    await register(console.url, people, "agent-00", "tom")
    mia = await console.signed_in(people.maintainer)
    await mia.goto(f"/proposals/{raised[0]}")
    await mia.get_by_role("button", name="Pick up").click()
    await expect(mia.get_by_role("alert")).to_contain_text("only a maintainer of agent")
    await expect(mia.locator("h1")).to_contain_text("Proposed")
    await shots.take(mia, "not-their-agent")

    bea = await console.signed_in(people.other_tenant)
    await bea.goto("/proposals")
    await expect(bea.get_by_text("No proposal has been raised yet")).to_be_visible()
    answer = await bea.goto(f"/proposals/{raised[0]}")
    assert answer is not None
    assert answer.status == 404
