"""The feedback widget in Chromium against the real service (decisions D230–D239): a shop's
page on another origin, under a strict Content-Security-Policy (no inline script or style),
embeds ``/widget/feedback.js`` with a token its backend minted; its user rates an answer with
the keyboard alone, comments, reports a wrong answer; the service records them as the token's
subject under the token's project and agent. An expired token is refused and the widget says
so; nothing is recorded. No CSP violation, no script error, axe finds nothing serious."""

import html
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import pytest
from playwright.async_api import ConsoleMessage, Page, expect
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from services.edge.auth import Principal, WidgetBound, hash_key
from services.edge.positions import ensure_position_key
from services.edge.widget_tokens import WidgetTokens, claims_of, widget_key
from tests.browser.conftest import Console, People, Person, Shots, accessible
from tests.standin import free_port, served

pytestmark = pytest.mark.timeout(180)

AGENT = "Shop/Agent/Assistant"


@pytest.fixture
def shop_port() -> int:
    return free_port()


@pytest.fixture
def console_env(people: People, shop_port: int) -> dict[str, str]:
    """Tenant A lets the shop's page embed the widget (D234)."""
    origins = {people.requester.tenant: [f"http://127.0.0.1:{shop_port}"]}
    return {"FEEDBACKLOOP_WIDGET_ORIGINS": json.dumps(origins)}


class Shop:
    """The embedding site: its pages (each a host element with the widget's options as data
    attributes) and its one module script, served with a strict CSP naming the service."""

    def __init__(self, service: str, port: int) -> None:
        self.service, self.origin = service, f"http://127.0.0.1:{port}"
        self.pages: dict[str, str] = {}
        self.app = Starlette(routes=[Route("/embed.js", self.embed), Route("/{name}", self.page)])

    def csp(self) -> str:
        return (
            "default-src 'none'; "
            f"script-src 'self' {self.service}; connect-src {self.service}; "
            "style-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
            "frame-ancestors 'none'"
        )

    def add(self, name: str, **data: str) -> str:
        attributes = " ".join(f'data-{k}="{html.escape(v)}"' for k, v in data.items())
        self.pages[name] = (
            '<!doctype html><html lang="en"><head><meta charset="utf-8">'
            '<title>Shop assistant</title><link rel="icon" href="data:,">'
            '<script type="module" src="/embed.js"></script></head>'
            "<body><main><h1>Your assistant's answer</h1>"
            "<p>The parcel arrives on Tuesday.</p>"
            f'<div id="feedback" {attributes}></div></main></body></html>'
        )
        return f"{self.origin}/{name}"

    async def page(self, request: Request) -> Response:
        found = self.pages.get(request.path_params["name"])
        if found is None:
            return Response(status_code=404)
        return Response(
            found, media_type="text/html", headers={"Content-Security-Policy": self.csp()}
        )

    async def embed(self, request: Request) -> Response:
        script = (
            f'import {{ mount }} from "{self.service}/widget/feedback.js";\n'
            'const host = document.getElementById("feedback");\n'
            "const d = host.dataset;\n"
            "mount(host, { token: d.token, subjectRef: d.subject, thread: d.thread,\n"
            "  messageRef: d.message, modelName: d.model });\n"
        )
        return Response(script, media_type="text/javascript")


@pytest.fixture
async def shop(console: Console, shop_port: int) -> AsyncIterator[Shop]:
    opened = Shop(console.url, shop_port)
    async with served(opened.app, port=shop_port):
        yield opened


def auth(person: Person) -> dict[str, str]:
    return {"Authorization": f"Bearer {person.key}"}


async def minted(url: str, people: People, origin: str) -> str:
    """The shop's backend: the agent registered (by the admin), then a token for the page."""
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        put = await http.put(
            f"/factory/agents/{AGENT}", json={"maintainers": ["mia"]}, headers=auth(people.admin)
        )
        assert put.status_code in (200, 201), put.text
        body = {"projectId": "shop", "agent": AGENT, "origin": origin, "minutes": 5}
        answer = await http.post(
            "/factory/widget/tokens", json=body, headers=auth(people.requester)
        )
        assert answer.status_code == 201, answer.text
        token: str = answer.json()["token"]
        return token


def watched(page: Page) -> list[str]:
    """Every CSP violation and script error of the page, whichever origin it comes from."""
    seen: list[str] = []

    def heard(message: ConsoleMessage) -> None:
        if message.type == "error" or "Content Security Policy" in message.text:
            seen.append(f"{message.text} ({message.location.get('url')})")

    page.on("console", heard)
    page.on("pageerror", lambda error: seen.append(str(error)))
    page.on(
        "response",
        lambda answer: (
            seen.append(f"{answer.status} {answer.url}") if answer.status >= 400 else None
        ),
    )
    return seen


async def recorded(url: str, reader: Person, subject_ref: str) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        answer = await http.get(
            "/factory/feedback", params={"subjectRef": subject_ref}, headers=auth(reader)
        )
        assert answer.status_code == 200, answer.text
        items: list[dict[str, Any]] = answer.json()["items"]
        return items


async def test_a_shop_s_user_rates_an_answer_with_the_keyboard_under_a_strict_csp(
    console: Console, people: People, shop: Shop, shots: Shots
) -> None:
    token = await minted(console.url, people, shop.origin)
    address = shop.add("answer", token=token, subject="run-widget-1")
    page = await console.page()
    errors = watched(page)
    await page.goto(address)
    widget = page.get_by_role("form", name="Feedback on this answer")
    await expect(widget).to_be_visible()
    await accessible(page)
    await shots.take(page, "widget")

    await page.keyboard.press("Tab")  # into the stars: a radio group
    for _ in range(3):
        await page.keyboard.press("ArrowRight")
    await expect(page.get_by_role("radio", name="4 of 5 stars")).to_be_checked()
    await page.keyboard.press("Tab")
    await expect(page.get_by_label("Comment (optional)")).to_be_focused()
    await page.keyboard.type("Clear, but it took a while.")
    await page.keyboard.press("Tab")
    await expect(page.get_by_role("button", name="Send feedback")).to_be_focused()
    await page.keyboard.press("Enter")
    await expect(page.get_by_role("status")).to_have_text("Thank you: your feedback was recorded.")
    await shots.take(page, "recorded")
    assert errors == []

    items = await recorded(console.url, people.reviewer, "run-widget-1")
    kinds = sorted((item["kind"], item.get("rating"), item["projectId"]) for item in items)
    assert kinds == [("comment", None, "shop"), ("rating", 4, "shop")]
    assert {item["givenBy"] for item in items} == {people.requester.subject}


async def test_a_wrong_answer_is_reported_on_the_token_s_agent(
    console: Console, people: People, shop: Shop, shots: Shots
) -> None:
    token = await minted(console.url, people, shop.origin)
    address = shop.add(
        "wrong", token=token, subject="run-widget-2", thread="thread-9",
        message="message-3", model="shop-model-1",
    )  # fmt: skip
    page = await console.page()
    errors = watched(page)
    await page.goto(address)
    await page.get_by_role("radio", name="1 of 5 stars").check()
    await page.get_by_role("checkbox", name="The answer was wrong: report it").check()
    await page.get_by_role("button", name="Send feedback").click()
    await expect(page.get_by_role("status")).to_have_text("Say in the comment what was wrong.")
    await expect(page.get_by_label("Comment (optional)")).to_be_focused()
    await page.keyboard.type("The parcel arrived on Friday, not Tuesday.")
    await page.get_by_role("button", name="Send feedback").click()
    await expect(page.get_by_role("status")).to_have_text(
        "Thank you: your feedback was recorded and the wrong answer reported."
    )
    await shots.take(page, "reported")
    await accessible(page)
    assert errors == []

    async with httpx.AsyncClient(base_url=console.url, timeout=30) as http:
        inbox = await http.get(
            "/factory/reports/inbox", params={"agent": AGENT}, headers=auth(people.reviewer)
        )
    assert inbox.status_code == 200, inbox.text
    (report,) = inbox.json()["items"]
    assert report["message"] == "The parcel arrived on Friday, not Tuesday."
    assert report["reporter"] == people.requester.subject


async def test_an_expired_token_is_refused_and_the_widget_says_so(
    console: Console, people: People, shop: Shop, database_url: str, shots: Shots
) -> None:
    await minted(console.url, people, shop.origin)  # the agent registered, as a shop's would be
    conn = await asyncpg.connect(database_url)
    try:
        signing = WidgetTokens(widget_key(await ensure_position_key(conn)))
    finally:
        await conn.close()
    minter = Principal(
        people.requester.tenant, people.requester.subject, frozenset(), False,
        frozenset({"Requester"}),
    )  # fmt: skip
    then = datetime.now(UTC) - timedelta(minutes=16)
    bound = WidgetBound("shop", AGENT, shop.origin)
    expired = signing.mint(claims_of(minter, hash_key(people.requester.key), bound, 15, then))
    address = shop.add("expired", token=expired, subject="run-widget-3")

    page = await console.page()
    watched(page)
    await page.goto(address)
    await page.get_by_role("radio", name="5 of 5 stars").check()
    await page.get_by_role("button", name="Send feedback").click()
    await expect(page.get_by_role("status")).to_have_text(
        "This feedback form has expired. Reload the page to send feedback."
    )
    await shots.take(page, "expired")
    assert await recorded(console.url, people.reviewer, "run-widget-3") == []
