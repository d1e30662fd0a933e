"""The console in headless Chromium: the service as its own process (``feedbackloop serve``) on
the real PostgreSQL, and Debian's ``chromium`` (``make system-deps``) driven by Playwright's
Python package — Playwright's own browser download is never used.

Each test gets the people of two tenants, a browser context per person, and a folder under
``var/test-output/browser/`` for its screenshots. Every page a test opens is watched: a
JavaScript error or a console error fails the test, and ``checked`` runs axe-core (vendored
under ``vendor/``) on the page and fails on a serious or critical violation.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, BrowserContext, Page, async_playwright

from services.edge.auth import SCOPES, new_key
from tests.e2e.conftest import wait_until_healthy
from tests.standin import ROOT, free_port

AXE = Path(__file__).parent / "vendor" / "axe.min.js"
OUTPUT = ROOT / "var" / "test-output" / "browser"
REFUSAL_LOGGED = re.compile(r"Failed to load resource: the server responded with a status of 4\d\d")


@dataclass(frozen=True)
class Person:
    tenant: str
    subject: str
    key: str


@dataclass(frozen=True)
class People:
    """Tenant A: a reviewer (rita), a requester (rob), an observer (olga), an admin (ada), an
    asset maintainer (mia), an operator (otto), a second requester (ria); tenant B: a
    reviewer (bea)."""

    reviewer: Person
    requester: Person
    observer: Person
    other_tenant: Person
    admin: Person
    maintainer: Person
    operator: Person
    other_requester: Person
    entries: str


@pytest.fixture
def people() -> People:
    a, b = f"tenant-a-{uuid.uuid4().hex[:6]}", f"tenant-b-{uuid.uuid4().hex[:6]}"
    made: list[tuple[Person, dict[str, Any]]] = []
    for tenant, subject, roles in (
        (a, "rita", ["Reviewer"]),
        (a, "rob", ["Requester"]),
        (a, "olga", ["Observer"]),
        (b, "bea", ["Reviewer"]),
        (a, "ada", ["PlatformAdmin"]),
        (a, "mia", ["AssetMaintainer"]),
        (a, "otto", ["Operator"]),
        (a, "ria", ["Requester"]),
    ):
        key, entry = new_key(tenant, subject, list(SCOPES))
        made.append((Person(tenant, subject, key), {**entry, "roles": roles}))
    persons = [person for person, _ in made]
    return People(*persons, entries=json.dumps([entry for _, entry in made]))


@pytest.fixture
def console_port() -> int:
    return free_port()


@pytest.fixture
def console_env() -> dict[str, str]:
    """More environment for the service; a test module overrides it (an issuer to sign in at)."""
    return {}


@pytest.fixture
def console_url(
    database_url: str,
    people: People,
    tmp_path: Path,
    console_port: int,
    console_env: dict[str, str],
) -> Iterator[str]:
    port = console_port
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "FEEDBACKLOOP_API_KEYS": people.entries,
        "FEEDBACKLOOP_PORT": str(port),
        "FEEDBACKLOOP_METRICS_PORT": "0",
        **console_env,
    }
    env.pop("KAFKA_BOOTSTRAP_SERVERS", None)
    log = tmp_path / "service.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "services.processes.cli", "serve"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, process, log)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        pytest.fail("chromium is not installed: run `make system-deps`")
    return found


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=chromium(), headless=True)
        try:
            yield launched
        finally:
            await launched.close()


@dataclass
class Watched:
    """The JavaScript errors and console errors of every page of a test."""

    errors: list[str] = field(default_factory=list)
    origin: str = ""  # the console's: another site's page (the issuer's login) is not ours

    def watch(self, page: Page) -> Page:
        page.on("pageerror", lambda error: self.errors.append(f"{page.url}: {error}"))
        page.on("console", lambda message: self.heard(page, message.type, message.text))
        return page

    def heard(self, page: Page, kind: str, text: str) -> None:
        # Chromium logs every 4xx answer as "Failed to load resource"; a refusal the console
        # shows (a conflict, a page not found) is an answer the test asserts on, not an error
        # of the page's scripts. A 5xx stays an error.
        ours = page.url.startswith(self.origin)
        if kind == "error" and ours and not REFUSAL_LOGGED.match(text):
            self.errors.append(f"{page.url}: {text}")


@dataclass
class Shots:
    folder: Path
    count: int = 0

    async def take(self, page: Page, name: str) -> None:
        self.count += 1
        await page.screenshot(path=self.folder / f"{self.count:02d}-{name}.png", full_page=True)


@pytest.fixture
def shots(request: pytest.FixtureRequest) -> Shots:
    folder = OUTPUT / re.sub(r"[^\w.-]", "_", request.node.name)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return Shots(folder)


@pytest.fixture
async def watched() -> AsyncIterator[Watched]:
    seen = Watched()
    yield seen
    assert seen.errors == [], "JavaScript errors in the browser's console"


@dataclass
class Console:
    """Opens a signed-in page for a person, each in a browser context of their own."""

    url: str
    browser: Browser
    watched: Watched
    contexts: list[BrowserContext] = field(default_factory=list)

    async def page(self) -> Page:
        """A page in a browser context of its own: a person of their own."""
        context = await self.browser.new_context(base_url=self.url)
        self.contexts.append(context)
        return self.watched.watch(await context.new_page())

    async def signed_in(self, person: Person) -> Page:
        page = await self.page()
        await page.goto("/sign-in")
        await page.get_by_label("API key", exact=True).fill(person.key)
        await page.get_by_role("button", name="Sign in", exact=True).click()
        await page.wait_for_load_state("networkidle")
        return page


@pytest.fixture
async def console(console_url: str, browser: Browser, watched: Watched) -> AsyncIterator[Console]:
    watched.origin = console_url
    opened = Console(console_url, browser, watched)
    yield opened
    for context in opened.contexts:
        await context.close()


async def accessible(page: Page) -> None:
    """axe-core on the page as it is: no serious or critical violation (WCAG 2 A/AA)."""
    # Evaluated through the DevTools protocol, as a test's own script: an inline <script> tag
    # is refused by the console's Content-Security-Policy (decisions D120), as it should be.
    await page.evaluate(AXE.read_text())
    result = await page.evaluate(
        "async () => await axe.run(document, {runOnly: ['wcag2a', 'wcag2aa', 'best-practice']})"
    )
    serious = [
        f"{v['id']}: {v['help']} ({len(v['nodes'])}× e.g. {v['nodes'][0]['html'][:120]})"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    assert serious == [], f"{page.url}: accessibility violations"


async def file_report(url: str, person: Person, message: str, **body: Any) -> str:
    """A question filed and submitted through the API, as a chat client files one; it is
    kept in the Inbox (it does not read as a defect, SPEC §3.2)."""
    headers = {"Authorization": f"Bearer {person.key}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as http:
        drafted = await http.post(
            "/factory/reports", json={"category": "question", "message": message, **body}
        )
        assert drafted.status_code == 201, drafted.text
        report_id: str = drafted.json()["reportId"]
        submitted = await http.post(f"/factory/reports/{report_id}/submit")
        assert submitted.status_code == 200, submitted.text
        # Read-your-writes: the Inbox has the report before a page is asked for it.
        seen = await http.get(
            f"/factory/reports/{report_id}", params={"minPosition": submitted.json()["position"]}
        )
        assert seen.status_code == 200, seen.text
        return report_id
