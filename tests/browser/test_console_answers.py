"""The console's security headers and error pages in Chromium: another origin cannot frame
the sign-in page, no page breaks its Content-Security-Policy while used (decisions D120), and
a mistyped or stale address is a page in the console's layout saying what was wrong, with a
link back (decisions D121)."""

import pytest
from playwright.async_api import expect

from tests.browser.conftest import Console, People, Shots, accessible

OTHER_ORIGIN = "http://elsewhere.test"
# Each page's Content-Security-Policy violations, as the page reports them.
VIOLATIONS = """
window.violations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.violations.push(event.violatedDirective + " " + event.blockedURI);
});
"""


async def test_another_origin_cannot_frame_the_sign_in_page(console: Console, shots: Shots) -> None:
    page = await console.page()
    framing = f'<!doctype html><title>Elsewhere</title><iframe src="{console.url}/sign-in">'
    await page.route(
        f"{OTHER_ORIGIN}/**",
        lambda route: route.fulfill(status=200, content_type="text/html", body=framing),
    )
    await page.goto(f"{OTHER_ORIGIN}/frames-the-console")
    await page.wait_for_load_state("load")
    frame = page.frames[1]
    assert not frame.url.startswith(console.url), frame.url  # Chromium's error page instead
    await expect(page.frame_locator("iframe").get_by_label("API key")).to_have_count(0)
    await shots.take(page, "framed-elsewhere")

    # The same page on its own origin is there: the frame was refused, not the page.
    own = await console.page()
    await own.goto("/sign-in")
    await expect(own.get_by_label("API key", exact=True)).to_be_visible()


async def test_pages_used_with_htmx_report_no_policy_violation(
    console: Console, people: People, shots: Shots
) -> None:
    admin = await console.page()
    await admin.context.add_init_script(VIOLATIONS)
    await admin.goto("/sign-in")
    await admin.get_by_label("API key", exact=True).fill(people.admin.key)
    await admin.get_by_role("button", name="Sign in", exact=True).click()
    for name in ("Audit", "Appraisal", "Operations"):
        await admin.get_by_role("navigation", name="Pages").get_by_role("link", name=name).click()
        await expect(admin.get_by_role("heading", level=1)).to_be_visible()
        assert await admin.evaluate("window.violations") == [], admin.url
    await admin.goto("/appraisal/charter")
    await expect(admin.get_by_role("form", name="Edit the charter")).to_be_visible()
    assert await admin.evaluate("window.charterEditor") is True  # charter.js ran
    assert await admin.evaluate("window.violations") == []
    await shots.take(admin, "charter-under-the-policy")


ERRORS = [
    ("/inbox/not-a-uuid", "Not found", "There is no page at /inbox/not-a-uuid", "Back to Inbox"),
    ("/inbox?status=bogus", "Not a valid address", "status", "Back to Inbox"),
    ("/audit?since=garbage", "Not a valid address", "since", "Back to Audit"),
    ("/digests/2026-W99", "Not a valid address", "week", "Back to Digests"),
    ("/no-such-page", "Not found", "There is no page at /no-such-page", "Back to the console"),
]


@pytest.mark.parametrize(("path", "title", "said", "back"), ERRORS)
async def test_an_error_is_a_page_of_the_console_with_a_way_back(
    console: Console, people: People, shots: Shots, path: str, title: str, said: str, back: str
) -> None:
    admin = await console.signed_in(people.admin)
    await admin.goto(path)
    await expect(admin.get_by_role("heading", name=title)).to_be_visible()
    await expect(admin.locator("main")).to_contain_text(said)
    await expect(admin.get_by_role("navigation", name="Pages")).to_be_visible()
    await shots.take(admin, "error")
    await accessible(admin)
    await admin.get_by_role("link", name=back).click()
    await expect(admin.get_by_role("heading", name=title)).to_have_count(0)
