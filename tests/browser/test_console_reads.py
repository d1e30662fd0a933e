"""The console's Inbox under the read rule (SPEC C52; decisions D23, D76): a Requester alone
is refused the Inbox and another person's report, as the API refuses them, and still opens
the reports they filed and their My reports."""

from playwright.async_api import expect

from tests.browser.conftest import Console, People, Shots, accessible, file_report


async def test_a_requester_alone_reads_their_own_reports_and_nothing_else(
    console: Console, people: People, shots: Shots
) -> None:
    own = await file_report(console.url, people.requester, "My own question")
    theirs = await file_report(console.url, people.other_requester, "Ria's question")
    rob = await console.signed_in(people.requester)

    answer = await rob.goto("/inbox")
    assert answer is not None
    assert answer.status == 403
    await expect(rob.get_by_role("heading", name="Not permitted")).to_be_visible()
    await expect(rob.locator("main")).to_contain_text("Reviewer")
    await expect(rob.locator("main")).not_to_contain_text("Ria's question")
    await shots.take(rob, "inbox-refused")
    await accessible(rob)

    answer = await rob.goto(f"/inbox/{theirs}")
    assert answer is not None
    assert answer.status == 403
    await expect(rob.locator("main")).not_to_contain_text("Ria's question")
    answer = await rob.goto(f"/inbox/{own}")
    assert answer is not None
    assert answer.status == 200
    await expect(rob.get_by_role("heading", name="In the reporter's words")).to_be_visible()
    await expect(rob.locator("main")).to_contain_text("My own question")
    await shots.take(rob, "own-report")
    # A lift forged with the session's own token: refused before the report is shown.
    csrf = await rob.locator("input[name=csrf]").first.input_value()
    forged = await rob.request.post(f"/inbox/{theirs}/lift", form={"csrf": csrf}, max_redirects=0)
    assert forged.status == 403
    assert "Ria's question" not in await forged.text()

    await rob.goto("/my-reports")
    await expect(rob.get_by_role("row").filter(has_text="My own question")).to_have_count(1)
    await expect(rob.locator("main")).not_to_contain_text("Ria's question")

    # Every other role reads the whole tenant: the observer sees both in the Inbox.
    olga = await console.signed_in(people.observer)
    answer = await olga.goto("/inbox")
    assert answer is not None
    assert answer.status == 200
    await expect(olga.locator("main")).to_contain_text("Ria's question")
    await expect(olga.locator("main")).to_contain_text("My own question")
