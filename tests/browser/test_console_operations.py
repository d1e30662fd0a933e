"""The Operations and Audit pages in a browser: an operator sees where the readers stand and a
parked event of their tenant, retries it once its cause is fixed, and the event is applied;
an admin filters the audit by actor and downloads the same rows as CSV (decisions D31, D94).
"""

import asyncio
import csv
import io
import re
from typing import Any

import asyncpg
import httpx
from playwright.async_api import Page, expect

from services.bus.audit_csv import FIELDS
from tests.browser.conftest import Console, People, Person, Shots, accessible, file_report

# A fault that meets some data only: the Inbox refuses to store a report whose words say
# "poison", as a bug in a read model would, until the constraint is dropped (the fix).
FAULT = (
    "ALTER TABLE rm_inbox.reports ADD CONSTRAINT poisoned "
    "CHECK (message NOT LIKE '%poison%') NOT VALID"
)
FIX = "ALTER TABLE rm_inbox.reports DROP CONSTRAINT poisoned"


async def until(check: Any, timeout: float = 60) -> Any:
    """Poll ``check()`` (a coroutine function) until it answers something truthy."""
    async with asyncio.timeout(timeout):
        while not (found := await check()):
            await asyncio.sleep(0.2)
        return found


async def drafted_and_submitted(url: str, person: Person, message: str) -> str:
    """A report filed through the API without waiting for the Inbox (it will not have it)."""
    headers = {"Authorization": f"Bearer {person.key}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as http:
        drafted = await http.post(
            "/factory/reports", json={"category": "question", "message": message}
        )
        assert drafted.status_code == 201, drafted.text
        report_id: str = drafted.json()["reportId"]
        submitted = await http.post(f"/factory/reports/{report_id}/submit")
        assert submitted.status_code == 200, submitted.text
        return report_id


async def in_inbox(url: str, person: Person, report_id: str) -> bool:
    headers = {"Authorization": f"Bearer {person.key}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as http:
        return (await http.get(f"/factory/reports/{report_id}")).status_code == 200


async def reaches_by_keyboard(page: Page, name: str) -> None:
    """Tab from the top of the page until the control named ``name`` has the focus."""
    await page.locator("body").focus()
    for _ in range(60):
        await page.keyboard.press("Tab")
        label = await page.evaluate(
            "document.activeElement && (document.activeElement.getAttribute('aria-label')"
            " || document.activeElement.innerText)"
        )
        if label and label.strip() == name:
            return
    raise AssertionError(f"{name!r} is not reached by Tab")


async def test_an_operator_sees_the_readers_and_retries_a_parked_event(
    console: Console, people: People, shots: Shots, database_url: str
) -> None:
    db = await asyncpg.connect(database_url)
    try:
        await file_report(console.url, people.requester, "A report before the fault")
        await db.execute(FAULT)
        report_id = await drafted_and_submitted(
            console.url, people.requester, "The poison pill report"
        )
        parked = await until(
            lambda: db.fetch(
                "SELECT position FROM parked WHERE reader = 'rm_inbox' ORDER BY position"
            )
        )

        observer = await console.signed_in(people.observer)
        await observer.goto("/operations")
        await expect(observer.get_by_role("table", name="Where each reader stands")).to_be_visible()
        await expect(observer.locator("main")).to_contain_text("of this tenant's events parked")
        await expect(observer.locator("main")).not_to_contain_text("poison")
        await expect(observer.get_by_role("button", name="Retry")).to_have_count(0)
        forged = await observer.request.post(
            f"/operations/parked/rm_inbox/{parked[0]['position']}/retry",
            form={"csrf": await observer.locator("input[name=csrf]").first.input_value()},
        )
        assert forged.status == 403, await forged.text()
        assert "needs the role Operator" in await forged.text()

        operator = await console.signed_in(people.operator)
        await operator.goto("/operations")
        readers = operator.get_by_role("table", name="Where each reader stands")
        await expect(readers.get_by_role("row").filter(has_text="rm_inbox")).to_be_visible()
        table = operator.get_by_role("table", name="This tenant's parked events")
        row = table.get_by_role("row").filter(has_text="rm_inbox").first
        await expect(row).to_contain_text("poisoned")
        await shots.take(operator, "parked")
        await accessible(operator)

        await db.execute(FIX)
        retry = f"Retry rm_inbox at position {parked[0]['position']}"
        await reaches_by_keyboard(operator, retry)
        await operator.keyboard.press("Enter")
        await expect(operator.get_by_role("status")).to_contain_text("Released")
        await shots.take(operator, "retried")
        await accessible(operator)

        assert await until(lambda: in_inbox(console.url, people.reviewer, report_id))
        await until(lambda: db.fetchval("SELECT count(*) = 0 FROM parked"))
        await operator.goto("/operations")
        await expect(operator.locator("main")).to_contain_text("0 of this tenant's events parked")
        await shots.take(operator, "nothing-parked")
    finally:
        await db.close()


async def test_another_tenants_operator_cannot_retry_this_tenants_parked_event(
    console: Console, people: People, database_url: str
) -> None:
    """Through the API, as a tenant B key with the Operator role sees it: a count, no content,
    and its retry answers 404 as for nothing parked."""
    db = await asyncpg.connect(database_url)
    try:
        await file_report(console.url, people.requester, "A report before the fault")
        await db.execute(FAULT)
        await drafted_and_submitted(console.url, people.requester, "Another poison report")
        parked = await until(lambda: db.fetchval("SELECT min(position) FROM parked"))
        ours = {"Authorization": f"Bearer {people.operator.key}"}
        async with httpx.AsyncClient(base_url=console.url, headers=ours, timeout=30) as http:
            listed = (await http.get("/factory/operations/parked")).json()
            assert listed["own"] >= 1, listed
            assert listed["others"] == 0, listed
            assert "poisoned" in listed["items"][0]["reason"], listed
        bea = {"Authorization": f"Bearer {people.other_tenant.key}"}
        async with httpx.AsyncClient(base_url=console.url, headers=bea, timeout=30) as http:
            refused = await http.get("/factory/operations/parked")
            assert refused.status_code == 403, refused.text  # a Reviewer watches nothing here
            retried = await http.post(f"/factory/operations/parked/rm_inbox/{parked}/retry")
            assert retried.status_code == 403, retried.text
    finally:
        await db.close()


async def test_an_admin_filters_the_audit_by_actor_and_downloads_it(
    console: Console, people: People, shots: Shots
) -> None:
    await file_report(console.url, people.requester, "Rob's first question")
    await file_report(console.url, people.requester, "Rob's second question")
    rita = {"Authorization": f"Bearer {people.reviewer.key}"}
    async with httpx.AsyncClient(base_url=console.url, headers=rita, timeout=30) as http:
        refused = await http.post("/factory/reports", json={"category": "bug", "message": "x"})
        assert refused.status_code == 403, refused.text  # a refusal is a row of the audit too

    admin = await console.signed_in(people.admin)
    await admin.goto("/audit")
    decisions = admin.get_by_role("table", name="Decisions, newest first")
    await expect(decisions.get_by_role("row").filter(has_text="rita")).to_contain_text(
        "not-permitted"
    )
    await accessible(admin)

    await admin.get_by_label("Actor").fill("rob")
    await admin.get_by_role("button", name="Filter").click()
    await expect(admin).to_have_url(re.compile(r"/audit\?actor=rob"))  # kept in the URL
    rows = decisions.locator("tbody tr")
    await expect(rows).to_have_count(4)  # two drafts, two submissions
    await expect(decisions.locator("tbody")).not_to_contain_text("rita")
    await shots.take(admin, "audit-by-actor")
    await accessible(admin)

    async with admin.expect_download() as downloading:
        await admin.get_by_role("link", name="Download CSV").click()
    download = await downloading.value
    assert download.suggested_filename.startswith(f"audit-{people.admin.tenant}-")
    text = (await download.path()).read_text()
    lines = list(csv.reader(io.StringIO(text)))
    assert tuple(lines[0]) == FIELDS
    assert [line[1] for line in lines[1:]] == ["rob"] * 4
    assert {line[7] for line in lines[1:]} == {"applied"}

    await admin.goto("/audit?aggregate=not-an-id")
    await expect(admin.locator("body")).not_to_contain_text("Traceback")


async def test_a_requester_is_refused_both_pages(console: Console, people: People) -> None:
    requester = await console.signed_in(people.requester)
    for path in ("/audit", "/operations", "/audit.csv"):
        answer = await requester.request.get(path)
        assert answer.status == 403, (path, answer.status)
    nav = requester.get_by_role("navigation", name="Pages")
    await expect(nav.get_by_role("link", name="Audit")).to_have_count(0)
    await expect(nav.get_by_role("link", name="Operations")).to_have_count(0)
