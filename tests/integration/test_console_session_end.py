"""The console's sessions end on the server (decisions D122), on real PostgreSQL: a cookie
copied before sign-out opens nothing after it, in this process or another, and its replay
restarts no idle clock; a PlatformAdmin ends every session of a person of their tenant, by
the API or the CLI, audited; another tenant's admin ends none of them; a person holding no
role is not given a session (its end would pass no role rule); an erased person's ended
sessions stay ended once the read models are rebuilt (D138)."""

import asyncio
import os
import sys
from collections.abc import AsyncIterator

import httpx
import pytest

from projections.access import Access
from services.console.sessions import COOKIE
from services.processes.bootstrap import Runtime
from services.projecting.rebuild import rebuild_many
from services.store.event_store import EVENTS_TABLE
from tests.conftest import client_for, event_count, settings_for
from tests.integration.access_keys import Admins, FakeKeys
from tests.integration.test_console_sessions import hidden, signed_in

END = "/factory/console-sessions/end"


@pytest.fixture
async def other_process(database_url: str, admins: Admins) -> AsyncIterator[Runtime]:
    """A second API process on the same database."""
    settings = settings_for(database_url, FakeKeys(admins.entries))  # type: ignore[arg-type]
    other = await Runtime.open(settings)
    await other.start_key_refresher()
    yield other
    await other.close()


def browser_of(runtime: Runtime, cookie: str | None = None) -> httpx.AsyncClient:
    """The console in-process as a browser reaches it; with ``cookie``: a copy of a session."""
    transport = httpx.ASGITransport(app=runtime.app(), raise_app_exceptions=False)
    client = httpx.AsyncClient(transport=transport, base_url="http://test")
    if cookie is not None:
        client.cookies.set(COOKIE, cookie, domain="test.local")
    return client


async def test_a_cookie_copied_before_sign_out_opens_nothing_after_it_anywhere(
    access_runtime: Runtime, other_process: Runtime, admins: Admins
) -> None:
    async with browser_of(access_runtime) as browser:
        assert (await signed_in(browser, admins.admin_a)).status_code == 303
        copied = browser.cookies[COOKIE]
        page = await browser.get("/inbox")
        assert page.status_code == 200
        out = await browser.post("/sign-out", data={"csrf": hidden(page.text, "csrf")})
        assert out.status_code == 303
    for runtime in (access_runtime, other_process):
        async with browser_of(runtime, copied) as thief:
            replayed = await thief.get("/inbox")
            assert replayed.status_code == 303, replayed.text
            assert replayed.headers["location"].startswith("/sign-in")
            assert COOKIE not in replayed.headers.get("set-cookie", "")  # no clock restarted
            refused = await thief.post("/sign-out", data={"csrf": "x"})
            assert refused.status_code == 401
            assert refused.headers["HX-Redirect"] == "/sign-in"
            assert "Your session ended" in refused.text  # a page of the console (D121)


async def test_an_admin_ends_every_session_of_a_person_in_every_process(
    access_runtime: Runtime, other_process: Runtime, admins: Admins
) -> None:
    async with browser_of(other_process) as there, browser_of(access_runtime) as here:
        assert (await signed_in(there, admins.admin_a)).status_code == 303
        assert (await signed_in(here, admins.admin_a)).status_code == 303
        assert (await there.get("/inbox")).status_code == 200
        async with client_for(access_runtime, admins.admin_b) as bob:  # another tenant's admin
            assert (await bob.post(END, json={"subject": "alice"})).status_code == 200
        assert (await there.get("/inbox")).status_code == 200
        async with client_for(access_runtime, admins.admin_a) as alice:
            ended = await alice.post(END, json={"subject": "alice"})
            assert ended.status_code == 200, ended.text
            assert (await there.get("/inbox")).status_code == 303
            assert (await here.get("/inbox")).status_code == 303
            await asyncio.sleep(0.01)
            assert (await signed_in(here, admins.admin_a)).status_code == 303  # a new one
            assert (await here.get("/inbox")).status_code == 200
            audit = await alice.get("/factory/audit", params={"actor": "alice"})
        rows = [(r["command"], r["result"]) for r in audit.json()["items"]]
        assert ("EndConsoleSessions", "applied") in rows
        assert ("EndConsoleSession", "applied") not in rows  # nobody signed out


async def test_ending_sessions_is_a_platform_admins_and_a_refusal_records_nothing(
    access_runtime: Runtime, admins: Admins
) -> None:
    before = await event_count(access_runtime)
    async with client_for(access_runtime, admins.plain_a) as anna:
        refused = await anna.post(END, json={"subject": "alice"})
    assert (refused.status_code, refused.json()["field"]) == (403, "role"), refused.text
    assert await event_count(access_runtime) == before
    async with client_for(access_runtime, admins.admin_a) as alice:
        blank = await alice.post(END, json={"subject": ""})
        unknown = await alice.post(END, json={"subject": "x", "tenant": "other"})
    assert (blank.status_code, blank.json()["field"]) == (422, "subject"), blank.text
    assert unknown.status_code == 422, unknown.text


async def test_a_person_holding_no_role_is_not_given_a_session(
    access_runtime: Runtime, admins: Admins
) -> None:
    async with browser_of(access_runtime) as browser:
        answer = await signed_in(browser, admins.plain_a)
        assert answer.status_code == 403
        assert "holds no role" in answer.text
        assert COOKIE not in browser.cookies


async def test_the_cli_ends_a_persons_sessions(
    access_runtime: Runtime, admins: Admins, database_url: str
) -> None:
    async with browser_of(access_runtime) as browser:
        assert (await signed_in(browser, admins.admin_a)).status_code == 303
        command = [sys.executable, "-m", "services.processes.cli", "sessions", "end"]
        process = await asyncio.create_subprocess_exec(
            *command, "--tenant", admins.tenant_a, "alice",
            env={**os.environ, "DATABASE_URL": database_url},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        said, _ = await process.communicate()
        assert process.returncode == 0, said.decode()
        assert "ended the console sessions of alice" in said.decode()
        async with asyncio.timeout(20):  # the read model applies the CLI's event
            while (await browser.get("/inbox")).status_code != 303:
                await asyncio.sleep(0.05)


async def erased_and_rebuilt(runtime: Runtime, admin_key: str, person: str) -> None:
    """The person erased (their keys destroyed, SPEC/D43), and the access read model rebuilt
    from the log and swapped in, as an erasure's rebuild does."""
    async with client_for(runtime, admin_key) as admin:
        erased = await admin.delete(f"/factory/people/{person}")
        assert erased.status_code == 200, erased.text
        assert erased.json()["keysDestroyed"] >= 1
    await rebuild_many(runtime.store, runtime.pool, [Access()], swap=True)


async def test_an_erased_persons_ended_sessions_stay_ended_after_a_rebuild(
    access_runtime: Runtime, admins: Admins
) -> None:
    """Whose session it was is sealed in the log (decisions D138): after the person is erased
    and the read models rebuilt, a session they signed out of, and one an admin ended, still
    read as ended (fail closed), since the read model is keyed by the aggregates' ids."""
    async with browser_of(access_runtime) as browser:
        assert (await signed_in(browser, admins.admin_a)).status_code == 303
        signed_out = browser.cookies[COOKIE]
        page = await browser.get("/inbox")
        out = await browser.post("/sign-out", data={"csrf": hidden(page.text, "csrf")})
        assert out.status_code == 303
    await erased_and_rebuilt(access_runtime, admins.admin_a, "alice")
    async with browser_of(access_runtime, signed_out) as thief:
        assert (await thief.get("/inbox")).status_code == 303  # still ended, not reopened

    async with browser_of(access_runtime) as browser:
        assert (await signed_in(browser, admins.admin_a)).status_code == 303
        ended_by_admin = browser.cookies[COOKIE]
        async with client_for(access_runtime, admins.admin_a) as alice:
            ended = await alice.post(END, json={"subject": "alice"})
            assert ended.status_code == 200, ended.text
        assert (await browser.get("/inbox")).status_code == 303
    await erased_and_rebuilt(access_runtime, admins.admin_a, "alice")
    async with browser_of(access_runtime, ended_by_admin) as thief:
        assert (await thief.get("/inbox")).status_code == 303
    await asyncio.sleep(0.01)
    async with browser_of(access_runtime) as browser:  # a session begun after: open
        assert (await signed_in(browser, admins.admin_a)).status_code == 303
        assert (await browser.get("/inbox")).status_code == 200

    # Nowhere in the log does a session's event name its person any more.
    async with access_runtime.pool.acquire() as conn:
        states = await conn.fetch(
            f"SELECT state FROM {EVENTS_TABLE} WHERE topic LIKE 'services.access.sessions:%'"
        )
    assert len(states) >= 3
    assert not [s for s in states if b"alice" in bytes(s["state"])]
