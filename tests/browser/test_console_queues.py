"""Review queues in a browser: a reviewer sees each queue's progress, claims the next report
with a button, finds it under "Assigned to me" and releases it; an observer sees the queues
and no button (decisions D160–D164)."""

import httpx
from playwright.async_api import expect

from tests.browser.conftest import Console, People, Shots, accessible, file_report


async def test_a_reviewer_claims_the_next_report_and_releases_it(
    console: Console, people: People, shots: Shots
) -> None:
    await file_report(console.url, people.requester, "Queued question about exports")
    headers = {"Authorization": f"Bearer {people.reviewer.key}"}
    async with httpx.AsyncClient(base_url=console.url, headers=headers, timeout=30) as http:
        defined = await http.put(
            "/factory/queues/questions", json={"filter": {"category": "question"}}
        )
        assert defined.status_code == 200, defined.text
        await http.get("/factory/queues", params={"minPosition": defined.json()["position"]})

    reviewer = await console.signed_in(people.reviewer)
    await reviewer.goto("/queues")
    await expect(reviewer.get_by_role("heading", name="Review queues")).to_be_visible()
    queues = reviewer.get_by_role("region", name="Queues")
    row = queues.get_by_role("row").filter(has_text="questions")
    await expect(row).to_contain_text("category: question")
    await expect(reviewer.get_by_text("You hold no report now.")).to_be_visible()
    await shots.take(reviewer, "queues")
    await accessible(reviewer)

    await row.get_by_role("button", name="Claim next of questions").click()
    await expect(reviewer.get_by_role("heading", name="In the reporter's words")).to_be_visible()
    await reviewer.goto("/queues")
    mine = reviewer.get_by_role("region", name="Assigned to me")
    await expect(mine.get_by_role("row").filter(has_text="questions")).to_be_visible()
    await expect(row.locator("td").nth(3)).to_have_text("1")  # claimed
    await shots.take(reviewer, "assigned-to-me")
    await accessible(reviewer)

    await mine.get_by_role("button", name="Release").click()
    await expect(reviewer.get_by_text("You hold no report now.")).to_be_visible()
    await expect(row.locator("td").nth(2)).to_have_text("1")  # open again

    # Nothing else waits once it is claimed again: the page says so, plainly.
    await row.get_by_role("button", name="Claim next of questions").click()
    await reviewer.goto("/queues")
    await row.get_by_role("button", name="Claim next of questions").click()
    await expect(reviewer.get_by_role("alert")).to_contain_text("no unclaimed report waits")
    await shots.take(reviewer, "nothing-waiting")

    observer = await console.signed_in(people.observer)
    await observer.goto("/queues")
    await expect(observer.get_by_role("row").filter(has_text="questions")).to_be_visible()
    await expect(observer.get_by_role("button", name="Claim next of questions")).to_have_count(0)
