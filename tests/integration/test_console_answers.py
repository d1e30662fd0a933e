"""What the console answers a browser beyond its pages, over HTTP in-process: the security
headers of every console response (decisions D120) and its errors as HTML pages in its own
layout, while the API keeps its JSON (decisions D121)."""

import uuid

import httpx
import pytest

from services.console.headers import CONTENT_SECURITY_POLICY, ConsoleHeaders
from services.edge.fast_lane import Api
from services.processes.bootstrap import Runtime
from tests.conftest import Keys, client_for, settings_for
from tests.integration.access_keys import FakeKeys, configured
from tests.integration.test_console_sessions import browser, hidden, signed_in
from tests.integration.test_role_rules import auth, filed_at

__all__ = ["browser"]  # the fixture, shared with the sessions' tests

ERRORS = [
    ("/inbox/not-a-uuid", 404, "There is no page at /inbox/not-a-uuid", "/inbox"),
    ("/inbox?status=bogus", 422, "status", "/inbox"),
    ("/audit?since=garbage", 422, "since", "/audit"),
    ("/digests/2026-W99", 422, "week", "/digests"),
    ("/no-such-page", 404, "There is no page at /no-such-page", "/"),
]


def secured(answer: httpx.Response) -> None:
    assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY
    assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY
    assert answer.headers["x-frame-options"] == "DENY"
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["referrer-policy"] == "same-origin"


async def test_every_console_answer_carries_the_security_headers(
    browser: httpx.AsyncClient, keys: Keys
) -> None:
    secured(await browser.get("/sign-in"))  # the page another site must not frame
    secured(await browser.get("/"))  # a redirect
    secured(await browser.get("/console/static/htmx.min.js"))
    secured(await browser.get("/no-such-page"))
    await signed_in(browser, keys.a)
    secured(await browser.get("/inbox"))
    api = await browser.get("/factory/reports/inbox")
    assert "content-security-policy" not in api.headers  # the API's answers are its own


@pytest.mark.parametrize(("path", "status", "said", "back"), ERRORS)
async def test_an_error_on_a_console_path_is_a_page_saying_what_was_wrong(
    browser: httpx.AsyncClient, keys: Keys, path: str, status: int, said: str, back: str
) -> None:
    await signed_in(browser, keys.a)
    answer = await browser.get(path)
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("text/html")
    assert said in answer.text
    assert f'<a href="{back}">' in answer.text
    assert 'aria-label="Pages"' in answer.text  # the navigation of the signed-in person
    secured(answer)


async def test_an_error_page_needs_no_session(browser: httpx.AsyncClient) -> None:
    answer = await browser.get("/no-such-page")
    assert answer.status_code == 404
    assert "There is no page at /no-such-page" in answer.text
    assert 'aria-label="Pages"' not in answer.text


async def test_the_api_keeps_its_json_errors(browser: httpx.AsyncClient, keys: Keys) -> None:
    auth = {"Authorization": f"Bearer {keys.a}"}
    missing = await browser.get("/factory/no-such-route", headers=auth)
    assert missing.status_code == 404
    assert missing.json()["error"] == "not-found"
    invalid = await browser.get("/factory/audit", params={"since": "garbage"}, headers=auth)
    assert invalid.status_code == 422
    assert invalid.json()["field"] == "since"


async def test_the_console_headers_leave_the_api_fast_lanes_in_front(runtime: Runtime) -> None:
    """The middleware touches no API path, so the lanes are still served before it (D120)."""
    app = runtime.app()
    assert isinstance(app, Api)
    assert ConsoleHeaders in [m.cls for m in app.user_middleware]
    assert app._lanes_in_front() != {}


async def test_a_failure_on_a_console_path_is_a_page_that_tells_nothing_of_it(
    runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    app = runtime.app()

    async def broken() -> None:
        raise RuntimeError("a bug with a secret")

    app.add_api_route("/broken-page", broken)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        answer = await http.get("/broken-page")
    assert answer.status_code == 500
    assert answer.headers["content-type"].startswith("text/html")
    assert "The service failed on this page" in answer.text
    assert "secret" not in answer.text
    assert "GET /broken-page failed" in caplog.text
    secured(answer)  # set by the page itself: a 500 is answered outside the middleware


async def test_a_refusal_on_a_console_page_says_so_in_its_own_words(
    browser: httpx.AsyncClient, keys: Keys
) -> None:
    await signed_in(browser, keys.a)
    page = await browser.get("/inbox")
    csrf = page.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    wrong = await browser.get("/sign-out")  # a form's address asked for as a page
    assert wrong.status_code == 405
    assert "allow" in wrong.headers
    assert "GET is not how this page is asked for" in wrong.text
    missing = await browser.post(
        "/inbox/00000000-0000-0000-0000-000000000000/review",
        data={"status": "Triaged", "csrf": csrf},
    )
    assert missing.status_code == 404, missing.text
    assert "Part of the address" not in missing.text


async def test_another_s_report_is_answered_as_a_made_up_id(database_url: str) -> None:
    """Decisions D100, D123: to a Requester alone (rob) another Requester's report (ria's) is
    the console's 404 page exactly as an id that names no report — the same status, headers'
    kind and words but for the id asked for — and so is a forged review of it."""
    tenant = f"tenant-a-{uuid.uuid4().hex[:6]}"
    rob, rob_entry = configured(tenant, "rob", ("Requester",))
    ria, ria_entry = configured(tenant, "ria", ("Requester",))
    entries = "[" + ",".join(e.model_dump_json() for e in (rob_entry, ria_entry)) + "]"
    runtime = await Runtime.open(settings_for(database_url, FakeKeys(entries)))  # type: ignore[arg-type]
    try:
        runtime.start_projections(["inbox"])
        async with client_for(runtime, ria) as api:
            theirs, position = await filed_at(api, ria)
            seen = await api.get(
                f"/factory/reports/{theirs}", params={"minPosition": position}, headers=auth(ria)
            )
            assert seen.status_code == 200, seen.text  # the Inbox holds it before rob asks
        transport = httpx.ASGITransport(app=runtime.app(), raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as console:
            assert (await signed_in(console, rob)).status_code == 303
            csrf = hidden((await console.get("/my-reports")).text, "csrf")
            made_up = str(uuid.uuid4())
            for ask in (console.get, lambda path: console.post(
                f"{path}/review", data={"status": "Triaged", "csrf": csrf}
            )):  # fmt: skip
                other, absent = await ask(f"/inbox/{theirs}"), await ask(f"/inbox/{made_up}")
                assert (other.status_code, absent.status_code) == (404, 404), other.text
                assert other.headers["content-type"] == absent.headers["content-type"]
                assert other.text.replace(theirs, "<id>") == absent.text.replace(made_up, "<id>")
                assert "Stundenansatz" not in other.text  # nothing of ria's report
                secured(other)
    finally:
        await runtime.close()
