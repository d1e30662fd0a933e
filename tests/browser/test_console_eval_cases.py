"""The Eval cases page in the browser: an agent owner lifts a report into a case, confirms it,
runs it against the stand-in agent with live progress, and sees the new last run with each
conversation's three checks (SPEC W41–W75; decisions D80–D82)."""

import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from playwright.async_api import expect

from tests.browser.conftest import Console, People, Person, Shots, accessible
from tests.standin import standin_agent

AGENT = "Office/Agent/Coach"
COURSE = "Office/Course/42"
LOOKED = {"name": "Get", "arguments": COURSE, "result": "Rhetoric starts on 12 January"}
WRONG_ANSWER = {
    "thread": "thread-7",
    "messageRef": "message-2",
    "prompt": "When does my course on rhetoric start?",
    "reply": {"agentName": AGENT, "modelName": "claude-sonnet-4-5"},
    "account": "It said my course does not exist.",
    "evidence": {"node": COURSE, "readable": True},
}
JAEGER = "http://localhost:16686/trace/{traceId}?uiFind={spanId}"
TRACE, SPAN = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
# Every conversation looks the course up; each answer takes a moment, so a run is seen running.
SCRIPT = {
    "modelName": "standin-1",
    "delaySeconds": 1.5,
    "rules": [
        {
            "when": "rhetoric",
            "replies": [
                {
                    "text": "Your rhetoric course starts on 12 January.",
                    "toolCalls": [LOOKED],
                    "traceId": TRACE,  # the agent names its answer's trace (D263)
                    "spanId": SPAN,
                },
                {"text": "It starts on 12 January, says Office/Course/42.", "toolCalls": [LOOKED]},
                {"text": "I could not find it."},
            ],
        }
    ],
    "default": {"text": "I don't know."},
}


@pytest.fixture
def standin(tmp_path: Path) -> Iterator[str]:
    with standin_agent(SCRIPT, tmp_path) as url:
        yield url


@pytest.fixture
def console_env(standin: str, people: People) -> dict[str, str]:
    """The service runs cases against the stand-in agent, as the e2e tests and the demo do;
    tenant A's tracing UI is Jaeger's (D265)."""
    return {
        "FEEDBACKLOOP_AGENT_URL": standin,
        "FEEDBACKLOOP_AGENT_KIND": "http",
        "FEEDBACKLOOP_TRACE_LINKS": json.dumps({people.admin.tenant: JAEGER}),
    }


def auth(person: Person) -> dict[str, str]:
    return {"Authorization": f"Bearer {person.key}"}


async def answer_report(url: str, people: People, maintainer: str = "mia") -> str:
    """The register names ``maintainer`` maintainer of the agent (ada, D22); rob reports its
    answer."""
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        registered = await http.put(
            f"/factory/agents/{AGENT}",
            json={"maintainers": [maintainer]},
            headers=auth(people.admin),
        )
        assert registered.status_code == 200, registered.text
        drafted = await http.post(
            "/factory/reports/wrong-answer", json=WRONG_ANSWER, headers=auth(people.requester)
        )
        assert drafted.status_code == 201, drafted.text
        report_id: str = drafted.json()["reportId"]
        submitted = await http.post(
            f"/factory/reports/{report_id}/submit", headers=auth(people.requester)
        )
        assert submitted.status_code == 200, submitted.text
        seen = await http.get(
            f"/factory/reports/{report_id}",
            params={"minPosition": submitted.json()["position"]},
            headers=auth(people.requester),
        )
        assert seen.status_code == 200, seen.text
        return report_id


async def test_an_agent_owner_lifts_confirms_and_runs_a_case_and_sees_its_last_run(
    console: Console, people: People, shots: Shots
) -> None:
    report_id = await answer_report(console.url, people)
    owner = await console.signed_in(people.maintainer)

    await owner.goto(f"/inbox/{report_id}")
    await owner.get_by_role("button", name="Make this an eval case").click()
    await expect(owner.get_by_role("table", name="The case's definition")).to_contain_text(COURSE)

    await owner.goto(f"/eval-cases?agent={quote(AGENT)}")
    cases = owner.get_by_role("table", name=f"Agent {AGENT}")
    await expect(cases).to_contain_text("When does my course on rhetoric start?")
    await expect(cases).to_contain_text("never run")
    await shots.take(owner, "cases")
    await accessible(owner)

    await cases.get_by_role("link", name="When does my course on rhetoric start?").click()
    await expect(owner.get_by_role("heading", level=1)).to_contain_text("not confirmed")
    await owner.get_by_role("button", name="Confirm", exact=True).click()
    await expect(owner.get_by_role("heading", level=1)).to_contain_text("confirmed by mia")
    await expect(owner.get_by_text("This case has never run.")).to_be_visible()
    await accessible(owner)

    await owner.get_by_label("Conversations").fill("3")
    await owner.get_by_role("button", name="Run", exact=True).click()
    # The run takes seconds (1.5 s a conversation): the page shows it under way meanwhile,
    # and polls (decisions D80, D81).
    await expect(owner.locator("#run-progress")).to_contain_text(
        re.compile("starting|of 3 conversations scored")
    )
    await shots.take(owner, "case-running")
    # W59–W64: two of three conversations look the course up and say the date; the page
    # polls the run's progress and shows the recorded run once it is there.
    checks = owner.get_by_role("table", name="Each conversation's three checks")
    await expect(checks).to_be_visible(timeout=30_000)
    await expect(checks.get_by_role("row")).to_have_count(4)
    await expect(owner.get_by_text("by mia (manual)")).to_be_visible()
    await expect(owner.get_by_role("img", name="The share of runs passed so far")).to_be_visible()
    await shots.take(owner, "case-run")
    await accessible(owner)

    await checks.get_by_role("link", name="Conversation 1").click()
    calls = owner.get_by_role("table", name="The tool calls behind the reply, in order")
    await expect(calls).to_contain_text(COURSE)
    await expect(owner.get_by_text("Your rhetoric course starts on 12 January.")).to_be_visible()
    trace = owner.get_by_role("link", name=f"trace {TRACE[:8]}")  # D265
    await expect(trace).to_have_attribute(
        "href", f"http://localhost:16686/trace/{TRACE}?uiFind={SPAN}"
    )
    await shots.take(owner, "conversation")
    await accessible(owner)

    await owner.goto(f"/eval-cases?agent={quote(AGENT)}")
    await expect(owner.get_by_role("table", name=f"Agent {AGENT}")).to_contain_text("by mia")


async def test_only_a_maintainer_of_the_agent_confirms_or_runs_and_an_observer_only_reads(
    console: Console, people: People, shots: Shots
) -> None:
    report_id = await answer_report(console.url, people, maintainer="someone-else")
    async with httpx.AsyncClient(base_url=console.url, timeout=30) as http:
        lifted = await http.post(
            f"/factory/reports/{report_id}/lift", headers=auth(people.maintainer)
        )
        assert lifted.status_code == 201, lifted.text
        case_id = lifted.json()["caseId"]
        seen = await http.get(
            f"/factory/evals/cases/{case_id}",
            params={"minPosition": lifted.json()["position"]},
            headers=auth(people.maintainer),
        )
        assert seen.status_code == 200, seen.text

    # SPEC C52, D23: mia maintains assets, but the register names another for this agent.
    owner = await console.signed_in(people.maintainer)
    await owner.goto(f"/eval-cases/{case_id}")
    await owner.get_by_role("button", name="Confirm", exact=True).click()
    await expect(owner.get_by_role("alert")).to_contain_text("Refused (403)")
    await expect(owner.get_by_role("heading", level=1)).to_contain_text("not confirmed")
    await owner.get_by_role("button", name="Run", exact=True).click()
    await expect(owner.locator("#run-progress")).to_contain_text(
        "The run was refused (403): a run of this case: only a maintainer", timeout=30_000
    )
    await shots.take(owner, "refused")
    await accessible(owner)

    observer = await console.signed_in(people.observer)
    await observer.goto(f"/eval-cases/{case_id}")
    await expect(observer.get_by_role("table", name="The case's definition")).to_contain_text(
        COURSE
    )
    await expect(observer.get_by_role("button", name="Run", exact=True)).to_have_count(0)
    await expect(observer.get_by_role("button", name="Confirm", exact=True)).to_have_count(0)
    await accessible(observer)
    refused = await observer.goto("/eval-cases?confirmed=maybe")
    assert refused is not None
    assert refused.status == 422  # bad query input is refused, never guessed at

    # Another tenant's reader finds no such case, and lists none of tenant A's.
    other = await console.signed_in(people.other_tenant)
    absent = await other.goto(f"/eval-cases/{case_id}")
    assert absent is not None
    assert absent.status == 404
    await other.goto("/eval-cases")
    await expect(other.get_by_text("No eval case")).to_be_visible()


async def test_a_requester_is_refused_the_eval_cases(console: Console, people: People) -> None:
    requester = await console.signed_in(people.requester)
    answer = await requester.goto("/eval-cases")
    assert answer is not None
    assert answer.status == 403  # D23: a Requester reads only their own
