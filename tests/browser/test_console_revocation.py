"""A key revoked or a role taken away ends the console's sessions at their next request
(SPEC C52; decisions D29, D59): the session holds the bearer, authorized afresh each time."""

import httpx
from playwright.async_api import Page, expect

from tests.browser.conftest import Console, People, Person, Shots


async def as_admin(console: Console, admin: Person, path: str, body: dict[str, object]) -> dict:
    headers = {"Authorization": f"Bearer {admin.key}"}
    async with httpx.AsyncClient(base_url=console.url, headers=headers, timeout=30) as http:
        answer = await http.post(path, json=body) if body else await http.post(path)
        assert answer.status_code in (200, 201), answer.text
        said: dict = answer.json()
        return said


async def signed_in_with(console: Console, key: str) -> Page:
    page = await console.page()
    await page.goto("/sign-in")
    await page.get_by_label("API key", exact=True).fill(key)
    await page.get_by_role("button", name="Sign in", exact=True).click()
    await expect(page.get_by_role("heading", name="Inbox")).to_be_visible()
    return page


async def test_a_revoked_role_and_a_revoked_key_end_their_sessions(
    console: Console, people: People, shots: Shots
) -> None:
    admin = people.admin
    scopes = ["factory.feedback.read", "factory.feedback.write"]
    await as_admin(console, admin, "/factory/roles/grant", {"subject": "ivy", "role": "Reviewer"})
    first = await as_admin(console, admin, "/factory/keys", {"subject": "ivy", "scopes": scopes})
    second = await as_admin(console, admin, "/factory/keys", {"subject": "ivy", "scopes": scopes})

    by_role = await signed_in_with(console, first["key"])
    await as_admin(console, admin, "/factory/roles/revoke", {"subject": "ivy", "role": "Reviewer"})
    await by_role.get_by_role("link", name="Inbox").first.click()
    await expect(by_role.get_by_role("heading", name="Sign in")).to_be_visible()
    await shots.take(by_role, "role-revoked")

    await as_admin(console, admin, "/factory/roles/grant", {"subject": "ivy", "role": "Reviewer"})
    by_key = await signed_in_with(console, second["key"])
    await as_admin(console, admin, f"/factory/keys/{second['keyId']}/revoke", {})
    await by_key.reload()
    await expect(by_key.get_by_role("heading", name="Sign in")).to_be_visible()
    await by_key.get_by_label("API key", exact=True).fill(second["key"])
    await by_key.get_by_role("button", name="Sign in", exact=True).click()
    await expect(by_key.get_by_role("alert")).to_contain_text("not known, or it was revoked")
    await shots.take(by_key, "key-revoked")


async def test_a_cookie_copied_before_sign_out_is_refused_after_it(
    console: Console, people: People, shots: Shots
) -> None:
    """Decisions D122: signing out ends the session on the server, not only in this browser."""
    reviewer = await console.signed_in(people.reviewer)
    await expect(reviewer.get_by_role("heading", name="Inbox")).to_be_visible()
    copied = await reviewer.context.cookies()
    await reviewer.get_by_role("button", name="Sign out").click()
    await expect(reviewer.get_by_role("heading", name="Sign in")).to_be_visible()

    thief = await console.page()
    await thief.context.add_cookies(copied)  # type: ignore[arg-type]
    await thief.goto("/inbox")
    await expect(thief.get_by_role("heading", name="Sign in")).to_be_visible()
    await shots.take(thief, "copied-cookie-refused")


async def test_an_admin_ends_every_session_of_a_person(
    console: Console, people: People, shots: Shots
) -> None:
    first = await console.signed_in(people.reviewer)
    second = await console.signed_in(people.reviewer)
    await as_admin(console, people.admin, "/factory/console-sessions/end", {"subject": "rita"})
    for page in (first, second):
        await page.get_by_role("link", name="Inbox").first.click()
        await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    await shots.take(second, "sessions-ended")
    again = await console.signed_in(people.reviewer)  # a new session is a new session
    await expect(again.get_by_role("heading", name="Inbox")).to_be_visible()
