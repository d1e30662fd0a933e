"""The Datasets page in a browser: an operator sees a dataset's versions, takes a snapshot,
downloads one and records a consent; an observer sees the same without a control to act; a
tenant sees nothing of another's (SPEC C13–C21, C17, C52; decisions D23, D61, D89)."""

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import httpx
from playwright.async_api import Page, expect

from tests.browser.conftest import Console, People, Person, Shots, accessible


async def stored(http: httpx.AsyncClient, text: str) -> str:
    answer = await http.post(
        "/factory/artifacts", content=text.encode(), headers={"Content-Type": "text/plain"}
    )
    assert answer.status_code == 201, answer.text
    ref: str = answer.json()["ref"]
    return ref


async def dataset_of_two_versions(url: str, operator: Person) -> str:
    """A curated dataset published twice through the API, as an operator's script does: v1
    with one task, v2 with two."""
    dataset_id = f"faq/answers-{uuid.uuid4().hex[:8]}"
    headers = {"Authorization": f"Bearer {operator.key}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as http:
        for n in (1, 2):
            task = {
                "taskId": f"t-{n}",
                "inputRef": await stored(http, f"When does course {n} start?"),
                "expectedRef": await stored(http, f"Course {n} starts on Monday."),
            }
            curated = await http.post(f"/factory/evaluation/datasets/{dataset_id}/tasks", json=task)
            assert curated.status_code == 201, curated.text
            published = await http.post(
                f"/factory/evaluation/datasets/{dataset_id}/snapshot",
                params={"minPosition": curated.json()["position"]},
            )
            assert published.status_code == 201, published.text
            assert published.json()["version"] == n
        # The page reads the read model: it holds both versions before a page is asked for.
        listed = await http.get(
            "/factory/evaluation/datasets", params={"minPosition": published.json()["position"]}
        )
        assert listed.status_code == 200, listed.text
    return dataset_id


async def csrf_of(page: Page) -> str:
    token = await page.locator("input[name=csrf]").first.input_value()
    assert token
    return token


async def test_an_operator_takes_a_snapshot_and_downloads_a_version(
    console: Console, people: People, shots: Shots
) -> None:
    dataset_id = await dataset_of_two_versions(console.url, people.operator)

    otto = await console.signed_in(people.operator)
    await otto.goto("/datasets")
    await expect(otto.get_by_role("heading", name="Datasets")).to_be_visible()
    row = otto.get_by_role("row").filter(has_text=dataset_id)
    await expect(row).to_contain_text("v2")
    await shots.take(otto, "datasets")
    await accessible(otto)

    await row.get_by_role("link", name=dataset_id).click()
    await expect(otto.get_by_role("heading", name=f"Dataset {dataset_id}")).to_be_visible()
    versions = otto.get_by_role(
        "table", name="Published versions, newest first; each never changes"
    )
    await expect(versions.get_by_role("row")).to_have_count(3)  # the header and two versions
    await expect(otto.get_by_role("table", name="The tasks a snapshot taken now holds, by id")
                 ).to_contain_text("t-2")  # fmt: skip
    await shots.take(otto, "dataset")
    await accessible(otto)

    await otto.get_by_role("button", name="Take a snapshot").click()
    await expect(versions.get_by_role("row")).to_have_count(4)
    await expect(versions.get_by_role("row").nth(1)).to_contain_text("v3")
    await shots.take(otto, "snapshot-taken")

    async with otto.expect_download() as downloading:
        await otto.get_by_role("link", name="Download v1").click()
    download = await downloading.value
    assert download.suggested_filename == f"{dataset_id.replace('/', '_')}-v1.json"
    document: dict[str, Any] = json.loads(
        await asyncio.to_thread(Path(await download.path()).read_bytes)
    )
    assert document["datasetId"] == dataset_id
    assert [task["taskId"] for task in document["tasks"]] == ["t-1"]  # v1 as it was published

    # A consent with the dataset's own tenant is refused, and shown as a sentence.
    await otto.get_by_label("Share with tenant").fill(people.operator.tenant)
    await otto.get_by_role("button", name="Record consent").click()
    await expect(otto.get_by_role("alert")).to_contain_text("not shared with its own tenant")
    await otto.get_by_label("Share with tenant").fill(people.other_tenant.tenant)
    await otto.get_by_role("button", name="Record consent").click()
    consents = otto.get_by_role("table", name="Consents recorded to share this dataset, anonymised")
    await expect(consents).to_contain_text(people.other_tenant.tenant)
    await expect(consents).to_contain_text("otto")
    await shots.take(otto, "consent-recorded")
    await accessible(otto)


async def test_an_observer_sees_the_versions_but_no_control_and_a_forged_post_is_refused(
    console: Console, people: People, shots: Shots
) -> None:
    dataset_id = await dataset_of_two_versions(console.url, people.operator)

    olga = await console.signed_in(people.observer)
    nav = olga.get_by_role("navigation", name="Pages")
    await nav.get_by_role("link", name="Datasets").click()
    await olga.get_by_role("link", name=dataset_id).click()
    await expect(olga.get_by_role("link", name="Download v2")).to_be_visible()
    await expect(olga.get_by_role("button", name="Take a snapshot")).to_have_count(0)
    await expect(olga.get_by_role("button", name="Record consent")).to_have_count(0)
    await shots.take(olga, "observer")
    await accessible(olga)

    token = await csrf_of(olga)
    forged = await olga.request.post(
        f"/datasets/{dataset_id}/snapshot", form={"csrf": token}, max_redirects=0
    )
    assert forged.status == 403
    assert "Operator" in await forged.text()
    listed = await (await olga.request.get(f"/datasets/{dataset_id}")).text()
    assert "Download v2" in listed
    assert "Download v3" not in listed  # not "v3": a random CSRF token may hold those letters


async def test_another_tenant_finds_neither_the_dataset_nor_its_snapshots(
    console: Console, people: People
) -> None:
    dataset_id = await dataset_of_two_versions(console.url, people.operator)

    bea = await console.signed_in(people.other_tenant)
    await bea.goto("/datasets")
    await expect(bea.get_by_role("link", name=dataset_id)).to_have_count(0)
    page = await bea.request.get(f"/datasets/{dataset_id}")
    assert page.status == 404
    snapshot = await bea.request.get(f"/datasets/{dataset_id}/versions/1/snapshot")
    assert snapshot.status == 404
    assert '"tasks"' not in await snapshot.text()


async def test_a_requester_is_not_shown_the_datasets(console: Console, people: People) -> None:
    rob = await console.signed_in(people.requester)
    answer = await rob.request.get("/datasets")
    assert answer.status == 403
    await expect(
        rob.get_by_role("navigation", name="Pages").get_by_role("link", name="Datasets")
    ).to_have_count(0)
