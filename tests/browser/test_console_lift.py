"""'Make this an eval case' from the Inbox: the preview of what the lift fills in, then the
case it made (SPEC W41–W51)."""

import httpx
from playwright.async_api import expect

from tests.browser.conftest import Console, People, Shots, accessible

WRONG_ANSWER = {
    "thread": "thread-7",
    "messageRef": "message-2",
    "prompt": "When does my course on rhetoric start?",
    "reply": {"agentName": "Office/Agent/Coach", "modelName": "claude-sonnet-4-5"},
    "account": "It said my course does not exist.",
    "evidence": {"node": "Office/Course/42", "readable": True},
}


async def test_a_reviewer_makes_an_answer_report_an_eval_case(
    console: Console, people: People, shots: Shots
) -> None:
    headers = {"Authorization": f"Bearer {people.requester.key}"}
    async with httpx.AsyncClient(base_url=console.url, headers=headers, timeout=30) as http:
        drafted = await http.post("/factory/reports/wrong-answer", json=WRONG_ANSWER)
        assert drafted.status_code == 201, drafted.text
        report_id = drafted.json()["reportId"]
        submitted = await http.post(f"/factory/reports/{report_id}/submit")
        assert submitted.status_code == 200, submitted.text
        position = submitted.json()["position"]
        seen = await http.get(f"/factory/reports/{report_id}", params={"minPosition": position})
        assert seen.status_code == 200, seen.text

    reviewer = await console.signed_in(people.reviewer)
    await reviewer.goto(f"/inbox/{report_id}")
    block = reviewer.get_by_role("table", name="What the chat client recorded of the answer")
    await expect(block).to_contain_text("Office/Agent/Coach")
    planned = reviewer.get_by_role("table", name="What the lift will fill in")
    await expect(planned).to_contain_text("Office/Agent/Coach")
    await expect(planned).to_contain_text("Office/Course/42")
    await shots.take(reviewer, "answer-report")
    await accessible(reviewer)

    await reviewer.get_by_role("button", name="Make this an eval case").click()
    case = reviewer.get_by_role("table", name="The case's definition")
    await expect(case).to_contain_text("When does my course on rhetoric start?")
    await expect(case).to_contain_text("Office/Course/42")
    await shots.take(reviewer, "eval-case")
    await accessible(reviewer)
