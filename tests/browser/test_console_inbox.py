"""The Inbox and My reports in a browser: a reviewer decides, the reporter sees what became of
the report; what a session may not see or do, it neither sees nor does (SPEC W30–W34, C52;
decisions D59–D61)."""

import asyncio

from playwright.async_api import Page, expect

from tests.browser.conftest import Console, People, Shots, accessible, file_report


async def csrf_of(page: Page) -> str:
    token = await page.locator("input[name=csrf]").first.input_value()
    assert token
    return token


async def reaches_by_keyboard(page: Page, name: str) -> None:
    """Tab from the top of the page until the button ``name`` has the focus."""
    await page.locator("body").focus()
    for _ in range(40):
        await page.keyboard.press("Tab")
        focused = await page.evaluate("document.activeElement && document.activeElement.innerText")
        if focused and focused.strip() == name:
            return
    raise AssertionError(f"the button {name!r} is not reached by Tab")


async def test_a_reviewer_triages_and_resolves_and_the_reporter_sees_the_change(
    console: Console, people: People, shots: Shots
) -> None:
    await file_report(console.url, people.requester, "Search does not find my course")

    reviewer = await console.signed_in(people.reviewer)
    await expect(reviewer.get_by_role("heading", name="Inbox")).to_be_visible()
    row = reviewer.get_by_role("row").filter(has_text="Search does not find my course")
    await expect(row).to_contain_text("New")
    await shots.take(reviewer, "inbox")
    await accessible(reviewer)

    await row.get_by_role("link").click()
    await expect(reviewer.get_by_role("heading", name="In the reporter's words")).to_be_visible()
    await reaches_by_keyboard(reviewer, "Triage")
    await reviewer.keyboard.press("Enter")  # the Triage button, by keyboard
    await expect(reviewer.locator("h1")).to_contain_text("Triaged")
    await expect(reviewer.locator(".steps")).to_contain_text("rita triaged")
    await shots.take(reviewer, "triaged")
    await accessible(reviewer)

    await reviewer.get_by_label("What changed").fill("Search reads the course catalogue now.")
    await reviewer.get_by_label("Link").fill("https://example.org/changes/42")
    await reviewer.get_by_role("button", name="Resolve").click()
    await expect(reviewer.locator("h1")).to_contain_text("Resolved")
    await expect(reviewer.locator(".steps")).to_contain_text("rita resolved")
    # Every step stays in the lifecycle: the triage is not replaced by the resolution.
    await expect(reviewer.locator(".steps li")).to_have_count(4)
    await expect(reviewer.locator(".steps")).to_contain_text("rita triaged")
    await shots.take(reviewer, "resolved")

    reporter = await console.signed_in(people.requester)
    nav = reporter.get_by_role("navigation", name="Pages")
    await expect(nav.get_by_role("link", name="My reports")).to_be_visible()
    await expect(nav.get_by_role("link", name="Inbox")).to_have_count(0)
    mine = reporter.get_by_role("row").filter(has_text="Search does not find my course")
    await expect(mine).to_contain_text("Resolved")
    await expect(mine).to_contain_text("Search reads the course catalogue now.")
    await expect(mine.get_by_role("link", name="https://example.org/changes/42")).to_be_visible()
    await shots.take(reporter, "my-reports")
    await accessible(reporter)


async def test_a_second_decision_on_a_decided_report_is_shown_plainly(
    console: Console, people: People, shots: Shots
) -> None:
    report_id = await file_report(console.url, people.requester, "The export option is gone")
    first = await console.signed_in(people.reviewer)
    await first.goto(f"/inbox/{report_id}")
    second = await first.context.new_page()
    console.watched.watch(second)
    await second.goto(f"/inbox/{report_id}")

    await first.get_by_role("button", name="Triage").click()
    await expect(first.locator("h1")).to_contain_text("Triaged")
    await second.get_by_role("button", name="Triage").click()

    refusal = second.get_by_role("alert")
    await expect(refusal).to_contain_text("Already Triaged by rita")
    await expect(second.locator("body")).not_to_contain_text("Traceback")
    await shots.take(second, "already-triaged")
    await accessible(second)

    await second.get_by_role("button", name="Resolve").click()  # saying nothing of what changed
    await expect(second.get_by_role("alert")).to_contain_text("says what changed")
    await expect(second.locator("h1")).to_contain_text("Triaged")
    await shots.take(second, "resolve-refused")


async def test_a_requester_sees_no_triage_button_and_a_forged_post_is_refused(
    console: Console, people: People, shots: Shots
) -> None:
    report_id = await file_report(console.url, people.requester, "It answered in French")
    requester = await console.signed_in(people.requester)
    await requester.goto(f"/inbox/{report_id}")
    await expect(requester.get_by_role("heading", name="In the reporter's words")).to_be_visible()
    await expect(requester.get_by_role("button", name="Triage")).to_have_count(0)
    await shots.take(requester, "no-triage")

    forged = await requester.request.post(
        f"/inbox/{report_id}/review",
        form={"csrf": await csrf_of(requester), "status": "Triaged"},
        max_redirects=0,
    )
    assert forged.status == 403, await forged.text()

    await requester.goto(f"/inbox/{report_id}")
    await expect(requester.locator("h1")).to_contain_text("New")


async def test_a_session_of_another_tenant_sees_nothing_of_this_one(
    console: Console, people: People, shots: Shots
) -> None:
    report_id = await file_report(console.url, people.requester, "Tenant A's own words")
    other = await console.signed_in(people.other_tenant)
    await expect(other.get_by_role("heading", name="Inbox")).to_be_visible()
    await expect(other.locator("main")).not_to_contain_text("Tenant A's own words")
    await shots.take(other, "other-tenant-inbox")

    await other.goto(f"/inbox/{report_id}")
    await expect(other.get_by_role("heading", name="Not found")).to_be_visible()
    forged = await other.request.post(
        f"/inbox/{report_id}/review",
        form={"csrf": await csrf_of(other), "status": "Triaged"},
        max_redirects=0,
    )
    assert forged.status == 404, await forged.text()

    reviewer = await console.signed_in(people.reviewer)
    await reviewer.goto(f"/inbox/{report_id}")
    await expect(reviewer.locator("h1")).to_contain_text("New")


async def test_a_post_without_the_csrf_token_is_refused(
    console: Console, people: People, shots: Shots
) -> None:
    report_id = await file_report(console.url, people.requester, "Nobody asked for this")
    reviewer = await console.signed_in(people.reviewer)
    await reviewer.goto(f"/inbox/{report_id}")

    bare = await reviewer.request.post(
        f"/inbox/{report_id}/review", form={"status": "Triaged"}, max_redirects=0
    )
    assert bare.status == 403
    assert "This form is not from this session" in await bare.text()  # a page (D121)
    wrong = await reviewer.request.post(
        f"/inbox/{report_id}/review",
        form={"status": "Triaged", "csrf": "not-the-token"},
        max_redirects=0,
    )
    assert wrong.status == 403

    await reviewer.reload()
    await expect(reviewer.locator("h1")).to_contain_text("New")
    await shots.take(reviewer, "still-new")


async def test_signing_out_ends_the_session(console: Console, people: People, shots: Shots) -> None:
    reviewer = await console.signed_in(people.reviewer)
    await reviewer.get_by_role("button", name="Sign out").click()
    await expect(reviewer.get_by_role("heading", name="Sign in")).to_be_visible()
    await reviewer.goto("/inbox")
    await expect(reviewer.get_by_role("heading", name="Sign in")).to_be_visible()
    await shots.take(reviewer, "signed-out")
    await accessible(reviewer)


async def test_a_reviewer_corrects_the_kind_tags_and_notes_and_the_reporter_sees_no_note(
    console: Console, people: People, shots: Shots
) -> None:
    """Decisions D170–D173 on the report page: both Kinds shown, a bad tag refused naming the
    field with nothing recorded, the note read by the reviewer and not by the reporter."""
    block = "Kind: not-found\nAgent: AgenticOffice/Agent/OfficeCoach"
    report_id = await file_report(
        console.url, people.requester, "The coach said no course", extraContext=block
    )
    reviewer = await console.signed_in(people.reviewer)
    await reviewer.goto(f"{console.url}/inbox/{report_id}")
    await reviewer.get_by_label("Kind", exact=True).select_option("fabricated")
    await reviewer.get_by_role("button", name="Correct").click()
    corrected = reviewer.locator("tr.corrected")
    await expect(corrected).to_contain_text("fabricated")
    await expect(corrected).to_contain_text("agent owner")
    await expect(reviewer.get_by_role("row", name="As reported")).to_contain_text("not-found")

    await reviewer.get_by_label("Tag (lowercase words joined by hyphens)").fill("Wrong Node")
    await reviewer.get_by_role("button", name="Add tag").click()
    await expect(reviewer.locator(".refusal")).to_contain_text("tag")
    await expect(reviewer.locator(".tag")).to_have_count(0)
    await reviewer.get_by_label("Tag (lowercase words joined by hyphens)").fill("wrong-node")
    await reviewer.get_by_role("button", name="Add tag").click()
    await expect(reviewer.locator(".tag")).to_have_text(["wrong-node"])

    await reviewer.get_by_label("Note (read by Reviewers only)").fill("Same node as last week.")
    await reviewer.get_by_role("button", name="Add note").click()
    await expect(reviewer.locator(".notes")).to_contain_text("Same node as last week.")
    await shots.take(reviewer, "annotated")
    await accessible(reviewer)

    reporter = await console.signed_in(people.requester)
    await reporter.goto(f"{console.url}/inbox/{report_id}")
    await expect(reporter.locator("tr.corrected")).to_contain_text("fabricated")
    await expect(reporter.locator(".tag")).to_have_text(["wrong-node"])
    await expect(reporter.get_by_text("Same node as last week.")).to_have_count(0)
    await expect(reporter.get_by_role("button", name="Add note")).to_have_count(0)


async def test_a_reviewer_downloads_the_filtered_inbox_as_csv_with_each_reports_lifecycle(
    console: Console, people: People, shots: Shots
) -> None:
    """Decisions D210–D212: the Inbox's download is the API's export under the page's
    filters; a cell that would be a formula is text (D112)."""
    await file_report(console.url, people.requester, "=1+2 is what the agent said")
    reviewer = await console.signed_in(people.reviewer)
    await reviewer.goto(console.url + "/inbox?status=New")
    link = reviewer.get_by_role("link", name="Download CSV")
    await expect(link).to_have_attribute("href", "/inbox.csv?status=New")
    await shots.take(reviewer, "inbox-downloads")
    await accessible(reviewer)
    async with reviewer.expect_download() as waiting:
        await link.click()
    download = await waiting.value
    assert download.suggested_filename.startswith("reports-")
    assert download.suggested_filename.endswith(".csv")
    saved = await download.path()
    text = await asyncio.to_thread(saved.read_text, encoding="utf-8")
    assert '"\'=1+2 is what the agent said"' in text
    assert '"lifecycle"' in text.splitlines()[0]
