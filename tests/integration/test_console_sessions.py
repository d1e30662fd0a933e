"""The console's sessions over HTTP, in-process: signing in with a key, the cookie's flags,
idle and absolute expiry, a bearer no longer accepted, a tampered cookie, sign-out and the
CSRF token of every write (decisions D59, D60)."""

import asyncio
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from fastapi import FastAPI

from services.console.app import install_console
from services.console.console import ConsoleSettings
from services.console.sessions import COOKIE, Session, new_session
from services.edge.http import Http
from services.processes.bootstrap import Runtime
from tests.conftest import Keys, client_for


@pytest.fixture
async def browser(runtime: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    """The console in-process, as a browser without JavaScript reaches it: cookies kept."""
    transport = httpx.ASGITransport(app=runtime.app(), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        yield client


def hidden(html: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', html)
    assert found, f"no {name} in the page"
    return found.group(1)


async def signed_in(browser: httpx.AsyncClient, key: str) -> httpx.Response:
    form = await browser.get("/sign-in")
    assert form.status_code == 200
    return await browser.post(
        "/sign-in", data={"key": key, "csrf": hidden(form.text, "csrf"), "next": "/inbox"}
    )


def with_session(browser: httpx.AsyncClient, runtime: Runtime, session: Session) -> None:
    browser.cookies.set(COOKIE, runtime.sessions.seal(session), domain="test.local")


async def test_signing_in_with_a_key_sets_a_strict_http_only_cookie(
    browser: httpx.AsyncClient, keys: Keys
) -> None:
    answer = await signed_in(browser, keys.a)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/inbox"
    cookie = answer.headers["set-cookie"].lower()
    assert f"{COOKIE}=" in cookie
    assert "httponly" in cookie
    assert "samesite=strict" in cookie
    assert "secure" not in cookie  # no TLS here: FEEDBACKLOOP_PUBLIC_URL is not https
    inbox = await browser.get("/inbox")
    assert inbox.status_code == 200
    assert "alice" in inbox.text


async def test_an_unknown_key_is_refused_and_no_session_is_made(
    browser: httpx.AsyncClient,
) -> None:
    answer = await signed_in(browser, "fl_not-a-key")
    assert answer.status_code == 401
    assert "not known" in answer.text
    assert COOKIE not in browser.cookies
    assert (await browser.get("/inbox")).status_code == 303


async def test_the_sign_in_form_needs_its_own_token(browser: httpx.AsyncClient, keys: Keys) -> None:
    answer = await browser.post("/sign-in", data={"key": keys.a, "next": "/inbox"})
    assert answer.status_code == 403
    assert COOKIE not in browser.cookies


async def test_a_session_unused_past_the_idle_time_ends(
    browser: httpx.AsyncClient, runtime: Runtime, keys: Keys
) -> None:
    now = datetime.now(UTC)
    fresh = new_session(keys.a, "key", now - timedelta(minutes=10))
    with_session(browser, runtime, fresh)
    assert (await browser.get("/inbox")).status_code == 200

    idle = Session(keys.a, "key", "csrf", now - timedelta(hours=1), now - timedelta(minutes=31))
    with_session(browser, runtime, idle)
    answer = await browser.get("/inbox?status=New")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/sign-in?next=%2Finbox%3Fstatus%3DNew"


async def test_a_session_past_its_absolute_time_ends_however_busy(
    browser: httpx.AsyncClient, runtime: Runtime, keys: Keys
) -> None:
    now = datetime.now(UTC)
    busy = Session(keys.a, "key", "csrf", now - timedelta(hours=13), now - timedelta(seconds=5))
    with_session(browser, runtime, busy)
    assert (await browser.get("/inbox")).status_code == 303


async def test_a_session_whose_bearer_is_no_longer_accepted_ends_at_the_next_request(
    browser: httpx.AsyncClient, runtime: Runtime
) -> None:
    now = datetime.now(UTC)
    with_session(browser, runtime, new_session("fl_a-key-since-revoked", "key", now))
    assert (await browser.get("/my-reports")).status_code == 303


async def test_a_tampered_cookie_is_no_session(
    browser: httpx.AsyncClient, runtime: Runtime, keys: Keys
) -> None:
    sealed = runtime.sessions.seal(new_session(keys.a, "key", datetime.now(UTC)))
    flipped = sealed[:-2] + ("A" if sealed[-2] != "A" else "B") + sealed[-1]
    browser.cookies.set(COOKIE, flipped, domain="test.local")
    assert (await browser.get("/inbox")).status_code == 303


async def test_sign_out_needs_the_token_and_ends_the_session(
    browser: httpx.AsyncClient, keys: Keys
) -> None:
    await signed_in(browser, keys.a)
    page = await browser.get("/inbox")
    refused = await browser.post("/sign-out", data={})
    assert refused.status_code == 403
    assert "This form is not from this session" in refused.text  # a page (D121)
    assert "<code>csrf</code>" in refused.text
    assert (await browser.get("/inbox")).status_code == 200

    out = await browser.post("/sign-out", data={"csrf": hidden(page.text, "csrf")})
    assert out.status_code == 303
    assert (await browser.get("/inbox")).status_code == 303


async def test_the_csrf_token_may_come_as_the_htmx_header(
    browser: httpx.AsyncClient, keys: Keys
) -> None:
    await signed_in(browser, keys.a)
    page = await browser.get("/inbox")
    out = await browser.post(
        "/sign-out", headers={"X-CSRF-Token": hidden(page.text, "csrf"), "HX-Request": "true"}
    )
    assert out.status_code == 303
    assert (await browser.get("/inbox")).status_code == 303


async def test_the_api_is_where_it_was_and_the_console_answers_at_the_root(
    browser: httpx.AsyncClient, keys: Keys
) -> None:
    assert (await browser.get("/")).headers["location"] == "/sign-in?next=%2F"
    api = await browser.get("/factory/reports/inbox")
    assert api.status_code == 401
    assert api.json()["error"] == "unauthorized"
    htmx = await browser.get("/console/static/htmx.min.js")
    assert htmx.status_code == 200
    assert "Zero-Clause BSD" in htmx.text[:200]


async def test_the_inbox_pages_by_fifty_with_its_filters_kept(
    browser: httpx.AsyncClient, runtime: Runtime, keys: Keys
) -> None:
    runtime.start_projections()
    async with client_for(runtime, keys.a) as api:

        async def filed(n: int) -> str:
            drafted = await api.post(
                "/factory/reports", json={"category": "question", "message": f"Question {n}"}
            )
            submitted = await api.post(f"/factory/reports/{drafted.json()['reportId']}/submit")
            assert submitted.status_code == 200, submitted.text
            return str(submitted.json()["position"])

        positions = await asyncio.gather(*(filed(n) for n in range(55)))
        for position in positions:  # every one applied, whichever was appended last
            seen = await api.get("/factory/reports/inbox", params={"minPosition": position})
            assert seen.status_code == 200, seen.text

    await signed_in(browser, keys.a)
    first = await browser.get("/inbox", params={"category": "question", "status": "New"})
    assert first.status_code == 200
    assert first.text.count('<a href="/inbox/') == 50
    older = re.search(r'<a href="(/inbox\?[^"]*before=[^"]*)">Older</a>', first.text)
    assert older, "no link to the older page"
    link = older.group(1).replace("&amp;", "&")
    assert "category=question" in link
    assert "status=New" in link
    second = await browser.get(link)
    assert second.status_code == 200
    assert second.text.count('<a href="/inbox/') == 5
    assert "Older</a>" not in second.text


@pytest.fixture
async def developer_console(runtime: Runtime, keys: Keys) -> AsyncIterator[httpx.AsyncClient]:
    """The console as the embedded default serves it: with the printed development key."""
    http = Http(runtime.bus, runtime.pool, runtime.keys, 5.0, runtime.positions)
    app = FastAPI()
    install_console(app, http, runtime.sessions, ConsoleSettings(dev_key=keys.a))
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        yield client


async def test_on_the_embedded_default_one_click_signs_in_as_the_development_user(
    developer_console: httpx.AsyncClient,
) -> None:
    form = await developer_console.get("/sign-in")
    assert "Sign in as the development user" in form.text
    answer = await developer_console.post(
        "/sign-in/developer", data={"csrf": hidden(form.text, "csrf"), "next": "/my-reports"}
    )
    assert answer.status_code == 303
    assert answer.headers["location"] == "/my-reports"
    mine = await developer_console.get("/my-reports")
    assert mine.status_code == 200
    assert "alice" in mine.text


async def test_with_keys_configured_there_is_no_development_user(
    browser: httpx.AsyncClient,
) -> None:
    form = await browser.get("/sign-in")
    assert "development user" not in form.text
    answer = await browser.post("/sign-in/developer", data={"csrf": hidden(form.text, "csrf")})
    assert answer.status_code == 404
    assert COOKIE not in browser.cookies
