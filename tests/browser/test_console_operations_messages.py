"""Parked inbound messages on the Operations page in a browser (decisions D96): the tenant's
Operator sees the messages naming the tenant, each with a labelled Retry reached by keyboard,
and the outcome on the page; the others are a count. The console under test runs without
Kafka, so Retry answers the 503 sentence; sending again for real is proven on the broker in
tests/integration/test_operations_messages.py."""

import json

import asyncpg
from playwright.async_api import expect

from tests.browser.conftest import Console, People, Shots, accessible
from tests.browser.test_console_operations import reaches_by_keyboard

PARK = (
    'INSERT INTO parked (reader, position, topic, partition, "offset", code, error, '
    "payload_size, sha256, head, headers) VALUES ('inbound', $1, 'feedbackloop.commands', 0, "
    "$2, 'failed', $3, $4, $5, $6, $7::jsonb)"
)


async def park(db: asyncpg.Connection, position: int, tenant: str, size: int = 0) -> None:
    """A structured-mode message kept whole or, with ``size``, a binary-mode one cut short
    (its tenant then read from its ``ce_tenantid`` header)."""
    head = json.dumps({"specversion": "1.0", "tenantid": tenant, "data": {}}).encode()
    headers = [["content-type", "application/cloudevents+json"]]
    if size:
        head, headers = b"x" * 1024, [["ce_tenantid", tenant]]
    await db.execute(
        PARK, position, 40 + position, f"failed 5 times: broken {position}",
        size or len(head), f"{position:064x}", head, json.dumps(headers),
    )  # fmt: skip


async def test_an_operator_sees_the_tenants_parked_messages_and_retry_says_why_not(
    console: Console, people: People, shots: Shots, database_url: str
) -> None:
    db = await asyncpg.connect(database_url)
    try:
        await park(db, 1, people.operator.tenant)  # tenant A's, kept whole
        await park(db, 2, people.operator.tenant, 5000)  # tenant A's too, cut short
        await park(db, 3, people.other_tenant.tenant)  # tenant B's
    finally:
        await db.close()

    observer = await console.signed_in(people.observer)
    await observer.goto("/operations")
    main = observer.locator("main")
    await expect(main).to_contain_text("2 parked messages naming this tenant")
    await expect(main).not_to_contain_text("broken 1")
    await expect(observer.get_by_role("button", name="Retry")).to_have_count(0)

    operator = await console.signed_in(people.operator)
    await operator.goto("/operations")
    table = operator.get_by_role("table", name="Kafka messages naming this tenant")
    await expect(table.get_by_role("row")).to_have_count(3)  # the header, messages 1 and 2
    await expect(table).to_contain_text("broken 1")
    cut = table.get_by_role("row").filter(has_text="broken 2")
    await expect(cut).to_contain_text("not kept whole")
    await expect(cut.get_by_role("button")).to_have_count(0)
    await expect(table).not_to_contain_text("broken 3")  # tenant B's: a count
    await expect(operator.locator("main")).to_contain_text("1 other")
    await shots.take(operator, "parked-messages")
    await accessible(operator)

    retry = "Retry parked message 1 (feedbackloop.commands 0/41)"
    await reaches_by_keyboard(operator, retry)
    await operator.keyboard.press("Enter")
    await expect(operator.get_by_role("alert")).to_contain_text("runs without Kafka")
    await shots.take(operator, "retry-without-kafka")
    await accessible(operator)

    forged = await operator.request.post(
        "/operations/parked-messages/3/retry",
        form={"csrf": await operator.locator("input[name=csrf]").first.input_value()},
    )
    assert forged.status == 404, await forged.text()
    assert "no parked message of yours at position 3" in await forged.text()
