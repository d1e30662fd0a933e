"""The Appraisal page and the charter editor in a browser: an agent's label over a window with
its valence as two sums, never netted (SPEC M40, M41); the charter re-ranked by drag and by
keyboard, a bad setpoint refused by the API's own parse next to its line (M10–M12, M15), and
the order saved being the rank the API answers (M07); who may read and who may write
(decisions D23, D61, D91–D93)."""

import re
from typing import Any

import httpx
from playwright.async_api import Page, expect

from tests.browser.conftest import Console, People, Person, Shots, accessible

CHARTER = """
[[line]]
id = "grounded"
text = "Answers rest on sources the asker can read."

[[line]]
id = "inbox-short"
text = "Nobody's report waits long."
sensor = { kind = "request_closure", setpoint = "2d" }

[[line]]
id = "outbox-few"
text = "Few drafts wait for their owner."
sensor = { kind = "outbox_waiting", setpoint = 5 }
"""


def api(url: str, person: Person) -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {person.key}"}
    return httpx.AsyncClient(base_url=url, headers=headers, timeout=30)


async def written_charter(url: str, admin: Person) -> None:
    async with api(url, admin) as http:
        put = await http.put(
            "/factory/appraisal/charter",
            content=CHARTER,
            headers={"Content-Type": "application/toml"},
        )
        assert put.status_code == 200, put.text
        seen = await http.get(
            "/factory/appraisal/charter", params={"minPosition": put.json()["position"]}
        )
        assert seen.status_code == 200, seen.text


async def charter_lines(url: str, person: Person) -> list[dict[str, Any]]:
    async with api(url, person) as http:
        answered = await http.get("/factory/appraisal/charter")
        assert answered.status_code == 200, answered.text
        lines: list[dict[str, Any]] = answered.json()["lines"]
        return lines


async def ids_in_editor(page: Page) -> list[str]:
    return await page.locator("input[name=id]").evaluate_all("els => els.map(e => e.value)")


def line(page: Page, line_id: str) -> Any:
    return page.locator("[data-line]").filter(has=page.locator(f"input[value='{line_id}']"))


async def test_a_line_is_dragged_up_a_bad_setpoint_is_refused_at_its_line_then_saved(
    console: Console, people: People, shots: Shots
) -> None:
    await written_charter(console.url, people.admin)
    admin = await console.signed_in(people.admin)
    await (
        admin.get_by_role("navigation", name="Pages").get_by_role("link", name="Appraisal").click()
    )
    await admin.get_by_role("link", name="The charter").click()
    await expect(admin.get_by_role("heading", name="Charter")).to_be_visible()
    assert await ids_in_editor(admin) == ["grounded", "inbox-short", "outbox-few", ""]
    # SPEC M20: the line's reading as the API reads it; an empty queue is no zero wait.
    closing = (await charter_lines(console.url, people.admin))[1]["sensor"]
    assert closing["state"] == "nothing-waiting"
    await expect(line(admin, "inbox-short")).to_contain_text("now nothing waiting")
    await shots.take(admin, "charter")
    await accessible(admin)

    # By drag: the third line's handle dropped on the first line ranks it first.
    await line(admin, "outbox-few").locator(".handle").drag_to(line(admin, "grounded"))
    assert await ids_in_editor(admin) == ["outbox-few", "grounded", "inbox-short", ""]
    await expect(admin.locator("#moved")).to_contain_text("outbox-few moved: now line 1")

    # By keyboard: Move up reached and pressed without a mouse.
    await line(admin, "inbox-short").get_by_role("button", name="Move up").focus()
    await admin.keyboard.press("Enter")
    assert await ids_in_editor(admin) == ["outbox-few", "inbox-short", "grounded", ""]
    await expect(line(admin, "inbox-short").locator("[data-rank]")).to_have_text("2")

    # SPEC M11: a setpoint of zero is refused by the charter's own parse, the whole document
    # with it (M15), and the refusal is shown on the line it names.
    await line(admin, "outbox-few").get_by_label("Setpoint").fill("0")
    await admin.get_by_role("button", name="Save the charter").click()
    refused = line(admin, "outbox-few").get_by_role("alert")
    await expect(refused).to_contain_text("line 1 ('outbox-few')")
    await expect(refused).to_contain_text("zero")
    await expect(line(admin, "outbox-few").get_by_label("Setpoint")).to_have_attribute(
        "aria-invalid", "true"
    )
    await expect(line(admin, "grounded").get_by_role("alert")).to_have_count(0)
    assert await ids_in_editor(admin) == ["outbox-few", "inbox-short", "grounded", ""]
    await shots.take(admin, "refused-at-its-line")
    await accessible(admin)
    kept = await charter_lines(console.url, people.admin)
    assert [x["id"] for x in kept] == ["grounded", "inbox-short", "outbox-few"]

    await line(admin, "outbox-few").get_by_label("Setpoint").fill("3")
    await admin.get_by_role("button", name="Save the charter").click()
    await expect(admin.get_by_role("status")).to_contain_text("Saved")
    assert await ids_in_editor(admin) == ["outbox-few", "inbox-short", "grounded", ""]
    await shots.take(admin, "saved")
    await accessible(admin)
    saved = await charter_lines(console.url, people.observer)
    assert [(x["rank"], x["id"]) for x in saved] == [
        (1, "outbox-few"), (2, "inbox-short"), (3, "grounded"),
    ]  # fmt: skip
    assert saved[0]["sensor"]["setpoint"] == "3"


async def test_a_new_line_is_added_in_the_empty_slot_after_a_duplicate_id_is_refused_at_it(
    console: Console, people: People, shots: Shots
) -> None:
    await written_charter(console.url, people.admin)
    admin = await console.signed_in(people.admin)
    await admin.goto("/appraisal/charter")
    fresh = admin.locator("[data-line]").last
    await fresh.get_by_label("Id").fill("grounded")  # M13: an id used twice
    await fresh.get_by_label("Text").fill("Said twice.")
    await admin.get_by_role("button", name="Save the charter").click()
    await expect(admin.locator("[data-line]").nth(3).get_by_role("alert")).to_contain_text(
        "already used by line 1"
    )
    await expect(admin.locator("[data-line]").nth(3).get_by_label("Id")).to_have_attribute(
        "aria-invalid", "true"
    )
    await admin.locator("[data-line]").nth(3).get_by_label("Id").fill("quiet")
    await (
        admin.locator("[data-line]")
        .nth(3)
        .get_by_label("Sensor")
        .select_option("intervention_rate")
    )
    await admin.locator("[data-line]").nth(3).get_by_label("Setpoint").fill("20%")
    await admin.get_by_role("button", name="Save the charter").click()
    await expect(admin.get_by_role("status")).to_contain_text("Saved")
    saved = await charter_lines(console.url, people.admin)
    assert [x["id"] for x in saved] == ["grounded", "inbox-short", "outbox-few", "quiet"]
    assert saved[3]["sensor"]["kind"] == "intervention_rate"
    await shots.take(admin, "line-added")


async def test_an_observer_reads_the_charter_and_a_forged_save_is_refused(
    console: Console, people: People, shots: Shots
) -> None:
    await written_charter(console.url, people.admin)
    observer = await console.signed_in(people.observer)
    await observer.goto("/appraisal/charter")
    await expect(observer.get_by_role("table")).to_contain_text("inbox-short")
    await expect(observer.get_by_role("button", name="Save the charter")).to_have_count(0)
    await shots.take(observer, "observer-charter")
    await accessible(observer)
    csrf = await observer.locator("input[name=csrf]").first.input_value()
    forged = await observer.request.post(
        "/appraisal/charter",
        form={"csrf": csrf, "id": "x", "text": "Mine now.", "kind": "", "setpoint": ""},
        max_redirects=0,
    )
    assert forged.status == 403, await forged.text()  # decisions D23: PlatformAdmin writes it
    assert [x["id"] for x in await charter_lines(console.url, people.admin)] == [
        "grounded", "inbox-short", "outbox-few",
    ]  # fmt: skip

    requester = await console.signed_in(people.requester)
    for path in ("/appraisal/charter", "/appraisal"):
        refused = await requester.goto(path)
        assert refused is not None
        assert refused.status == 403


async def reported_and_resolved(url: str, people: People, agent: str) -> None:
    """A wrong-answer report naming ``agent`` (−1.0) resolved with a change (+0.5), through the
    API; the appraisal read model has both before the page is asked."""
    block = f"Kind: not-found\nAgent: {agent}"
    async with api(url, people.requester) as http:
        drafted = await http.post(
            "/factory/reports",
            json={"category": "answer", "message": "It found no rate", "extraContext": block},
        )
        assert drafted.status_code == 201, drafted.text
        report_id = drafted.json()["reportId"]
        submitted = await http.post(f"/factory/reports/{report_id}/submit")
        assert submitted.status_code == 200, submitted.text
    async with api(url, people.reviewer) as http:
        for review in (
            {"status": "Triaged"},
            {"status": "Resolved", "change": "The rate card is indexed now."},
        ):
            decided = await http.post(f"/factory/reports/{report_id}/review", json=review)
            assert decided.status_code == 200, decided.text
        seen = await http.get(
            f"/factory/appraisal/agents/{agent}",
            params={"minPosition": decided.json()["position"]},
        )
        assert seen.status_code == 200, seen.text
        assert seen.json()["valence"]["shown"] == "+0.5 \u22121.0"


async def test_an_agents_valence_is_shown_as_two_sums_over_the_window_in_the_url(
    console: Console, people: People, shots: Shots
) -> None:
    await reported_and_resolved(console.url, people, "coach")
    observer = await console.signed_in(people.observer)
    await observer.goto("/appraisal")
    row = observer.get_by_role("row").filter(has_text="coach")
    await expect(row.locator(".valence.positive")).to_have_text("+0.5")  # M41: never −0.5
    await expect(row.locator(".valence.negative")).to_have_text("\u22121.0")
    await expect(row).to_contain_text("distress")  # M40: mixed evidence follows the negative
    await shots.take(observer, "agents")
    await accessible(observer)

    await row.get_by_role("link", name="coach").click()
    opened = observer.get_by_role("region", name="coach")
    await expect(opened).to_contain_text("report-not-found")
    await expect(opened).to_contain_text("report-resolved-with-change")
    await shots.take(observer, "agent-opened")
    await accessible(observer)

    # The window is in the URL: a window after the facts signs nothing.
    await observer.get_by_label("From (UTC day)").fill("2999-01-01")
    await observer.get_by_role("button", name="Show this window").click()
    await expect(observer).to_have_url(re.compile(r"since=2999-01-01"))
    await expect(observer.get_by_role("row").filter(has_text="coach")).to_contain_text(
        "nothing signed"
    )
    await shots.take(observer, "empty-window")

    other = await console.signed_in(people.other_tenant)
    await other.goto("/appraisal")
    await expect(other.locator("main")).not_to_contain_text("coach")

    bad = await observer.request.get("/appraisal?since=2026-02-01&until=2026-01-01")
    assert bad.status == 422  # a page of the console naming the field (decisions D121)
    assert "<code>since</code>: since is after until" in await bad.text()


async def test_the_agents_are_paged_by_a_sealed_cursor(
    console: Console, people: People, shots: Shots
) -> None:
    names = [f"agent-{n:02d}" for n in range(21)]
    async with api(console.url, people.requester) as http:
        for name in names:
            drafted = await http.post(
                "/factory/reports",
                json={
                    "category": "answer",
                    "message": "Wrong",
                    "extraContext": f"Kind: fabricated\nAgent: {name}",
                },
            )
            assert drafted.status_code == 201, drafted.text
            submitted = await http.post(f"/factory/reports/{drafted.json()['reportId']}/submit")
            assert submitted.status_code == 200, submitted.text
    async with api(console.url, people.reviewer) as http:
        seen = await http.get(
            f"/factory/appraisal/agents/{names[-1]}",
            params={"minPosition": submitted.json()["position"]},
        )
        assert seen.json()["counts"]["reports"] == 1
    observer = await console.signed_in(people.observer)
    await observer.goto("/appraisal?since=2000-01-01")
    await expect(observer.locator("tbody tr")).to_have_count(20)
    await expect(observer.locator("tbody")).not_to_contain_text("agent-20")
    await observer.get_by_role("link", name="More agents").click()
    await expect(observer.locator("tbody tr")).to_have_count(1)
    await expect(observer.locator("tbody")).to_contain_text("agent-20")
    await expect(observer).to_have_url(re.compile(r"since=2000-01-01"))  # the window is kept
    await shots.take(observer, "second-page")
    await accessible(observer)

    other = await console.signed_in(people.other_tenant)
    cursor = observer.url.split("before=")[1].split("&")[0]
    refused = await other.goto(f"/appraisal?before={cursor}")
    assert refused is not None
    assert refused.status == 422  # another tenant's cursor opens nothing here
