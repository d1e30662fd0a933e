"""The console's Inbox under the read rule (SPEC C52; decisions D23, D76): a Requester alone
is refused the Inbox, finds another person's report absent exactly as a made-up id (D100,
D123), and still opens the reports they filed and their My reports."""

import uuid

from playwright.async_api import Page, expect

from tests.browser.conftest import Console, People, Shots, accessible, file_report
from tests.browser.test_console_datasets import dataset_of_two_versions
from tests.browser.test_console_inbox import csrf_of


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
    assert answer.status == 404  # absent to them, as a made-up id (decisions D100, D123)
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


async def as_seen(page: Page, path: str, item: str) -> tuple[int, str, str]:
    """What a visitor can read of ``path``'s answer: status, title and the main text, with the
    asked-for id put aside (it is in the address the visitor typed)."""
    answer = await page.goto(path)
    assert answer is not None
    main = await page.locator("main").inner_text()
    return answer.status, await page.title(), main.replace(item, "<id>")


async def test_another_s_report_is_answered_exactly_as_a_made_up_id(
    console: Console, people: People
) -> None:
    """Decisions D100, D123: the console's report page asks the API's rule
    (``rules.reads_report``); to a Requester alone another person's report is the same 404
    page as an id that names no report — same status, title and words — and a forged review
    of it gets the same answer as one of a made-up id, so the ids of others' reports cannot
    be told apart at this door either."""
    theirs = await file_report(console.url, people.other_requester, "Ria's question")
    made_up = str(uuid.uuid4())
    rob = await console.signed_in(people.requester)

    other = await as_seen(rob, f"/inbox/{theirs}", theirs)
    absent = await as_seen(rob, f"/inbox/{made_up}", made_up)
    assert other == absent
    assert absent[:2] == (404, "Not found · Feedback Loop")
    assert "Ria's question" not in other[2]
    await expect(rob.get_by_role("heading", name="Not found")).to_be_visible()

    csrf = await csrf_of(rob)
    answers = []
    for report in (theirs, made_up):
        forged = await rob.request.post(
            f"/inbox/{report}/review", form={"csrf": csrf, "status": "Triaged"}, max_redirects=0
        )
        answers.append((forged.status, (await forged.text()).replace(report, "<id>")))
    assert answers[0] == answers[1]
    assert answers[0][0] == 404
    assert "Ria's question" not in answers[0][1]


async def test_a_refused_act_shows_a_requester_alone_no_item_of_the_tenant(
    console: Console, people: People
) -> None:
    """Decisions D23, D123: any signed-in person may post a form; the page shown after the
    command refuses a Requester alone is refused by the page's own rule before the item is
    looked up — the same 403 for a dataset that exists and one that does not, with nothing of
    the dataset in it (it was the dataset's page, 403, against a 404 for a made-up one)."""
    dataset_id = await dataset_of_two_versions(console.url, people.operator)
    made_up = f"faq/none-{uuid.uuid4().hex[:8]}"
    rob = await console.signed_in(people.requester)
    await rob.goto("/my-reports")
    csrf = await csrf_of(rob)

    answers = []
    for item in (dataset_id, made_up):
        forged = await rob.request.post(
            f"/datasets/{item}/snapshot", form={"csrf": csrf}, max_redirects=0
        )
        answers.append((forged.status, (await forged.text()).replace(item, "<id>")))
    assert answers[0] == answers[1]
    assert answers[0][0] == 403
    assert "Not permitted" in answers[0][1]
    assert "Download v" not in answers[0][1]  # nothing of the dataset's page
    for path in (f"/proposals/{uuid.uuid4()}/pick-up", f"/eval-cases/{uuid.uuid4()}/confirm"):
        forged = await rob.request.post(path, form={"csrf": csrf}, max_redirects=0)
        assert forged.status == 403, path  # refused by the page's rule, not "no such item"
    # The Operations page after a refused retry: refused by its rule, the instance's readers
    # and parked events unshown (it was the whole page, 403).
    forged = await rob.request.post(
        "/operations/parked/rm_inbox/1/retry", form={"csrf": csrf}, max_redirects=0
    )
    assert forged.status == 403
    assert "Not permitted" in await forged.text()
    assert "Readers of the log" not in await forged.text()
