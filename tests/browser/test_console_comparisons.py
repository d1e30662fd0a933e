"""A comparison side by side in the browser (decisions D182): an agent owner compares the
current model with a candidate that regresses, and reads the case's verdicts, checks and
conversations side by side; another tenant finds no such comparison."""

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.async_api import expect

from tests.browser.conftest import Console, People, Shots, accessible
from tests.browser.test_console_eval_cases import AGENT, LOOKED, answer_report, auth
from tests.standin import standin_agent

RIGHT = {"text": "Your rhetoric course starts on 12 January.", "toolCalls": [LOOKED]}
SCRIPT = {
    "modelName": "standin-1",
    "rules": [
        {"when": "rhetoric", "forModel": "cand-2", "text": "There is no such course."},
        {"when": "rhetoric", **RIGHT},
    ],
    "default": {"text": "I don't know."},
}


@pytest.fixture
def standin(tmp_path: Path) -> Iterator[str]:
    with standin_agent(SCRIPT, tmp_path) as url:
        yield url


@pytest.fixture
def console_env(standin: str) -> dict[str, str]:
    return {"FEEDBACKLOOP_AGENT_URL": standin, "FEEDBACKLOOP_AGENT_KIND": "http"}


async def compared(url: str, people: People) -> str:
    """A confirmed case of the agent, compared over the API: the comparison's id."""
    report_id = await answer_report(url, people)
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        owner = auth(people.maintainer)
        lifted = await http.post(f"/factory/reports/{report_id}/lift", headers=owner)
        case_id = lifted.json()["caseId"]
        confirmed = await http.post(
            f"/factory/evals/cases/{case_id}/confirm", json={"confirmed": True}, headers=owner
        )
        assert confirmed.status_code == 200, confirmed.text
        for _ in range(200):  # the eval-cases read model has the confirmation
            found = await http.get(
                "/factory/evals/cases", params={"confirmed": "true"}, headers=owner
            )
            if found.json()["items"]:
                break
            await asyncio.sleep(0.05)
        body = {"agent": AGENT, "candidate": {"model": "cand-2"}, "conversations": 2}
        started = await http.post("/factory/evals/comparisons", json=body, headers=owner)
        assert started.status_code == 201, started.text
        return str(started.json()["comparisonId"])


async def test_an_agent_owner_reads_a_comparison_side_by_side(
    console: Console, people: People, shots: Shots
) -> None:
    comparison_id = await compared(console.url, people)
    owner = await console.signed_in(people.maintainer)
    await owner.goto(f"/eval-cases/comparisons/{comparison_id}")
    await expect(owner.get_by_role("heading", level=1)).to_contain_text("against cand-2")
    totals = owner.get_by_role("table", name="Each side's pass rate and what changed")
    await expect(totals).to_contain_text("100%")
    await expect(owner.get_by_role("heading", level=2)).to_contain_text("regressed")
    checks = owner.get_by_role("table", name="Verdict and checks, side by side")
    await expect(checks).to_contain_text("Grounded (changed)")
    pairs = owner.get_by_role("table", name="Conversations, side by side (2 differ)")
    await expect(pairs).to_contain_text("There is no such course.")
    await expect(pairs).to_contain_text("Your rhetoric course starts on 12 January.")
    await shots.take(owner, "comparison")
    await accessible(owner)

    other = await console.signed_in(people.other_tenant)
    absent = await other.goto(f"/eval-cases/comparisons/{comparison_id}")
    assert absent is not None
    assert absent.status == 404
