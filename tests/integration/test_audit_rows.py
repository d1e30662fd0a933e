"""What a row of the audit holds, on real PostgreSQL (decisions D30, D110, D280, D281): a
batch request's items that ended alike are one row naming how many they are and every
aggregate; a single command is a row of its own; the table keeps one key, and a table made
with the older key and index is given the one key."""

import csv
import io

import asyncpg
import httpx

from services.bus.audit import TABLE, ensure_table
from services.processes.bootstrap import Runtime
from tests.conftest import client_for
from tests.integration.access_keys import Admins
from tests.integration.test_audit import FEEDBACK, every_page
from tests.integration.test_console_sessions import signed_in

# The table as it was made before decisions D280: its key on id, an index by tenant.
OLDER = f"""
CREATE TABLE {TABLE} (
    id bigserial PRIMARY KEY, tenant_id text NOT NULL, actor text NOT NULL,
    roles text[] NOT NULL, service boolean NOT NULL, at timestamptz NOT NULL,
    command text NOT NULL, command_id text NOT NULL, aggregates uuid[] NOT NULL,
    result text NOT NULL, reason text
);
CREATE INDEX audit_by_tenant ON {TABLE} (tenant_id, id);
ALTER TABLE {TABLE} ADD COLUMN door text;
"""


async def test_a_batch_requests_items_that_ended_alike_are_one_row_naming_each_aggregate(
    access_runtime: Runtime, admins: Admins
) -> None:
    items = [FEEDBACK | {"subjectRef": f"r-{n}"} for n in range(3)]
    unrated = {k: v for k, v in FEEDBACK.items() if k != "rating"}  # refused alone
    async with client_for(access_runtime, admins.admin_a) as alice:
        answer = await alice.post("/factory/feedback:batch", json={"items": [*items, unrated]})
        assert answer.status_code == 200, answer.text
        written = [item["feedbackId"] for item in answer.json()["items"][:3]]
        assert answer.json()["items"][3]["status"] == 422
        found = await every_page(alice)
    refused, applied = found
    assert (applied["command"], applied["result"], applied["items"]) == (
        "RecordFeedback",
        "applied",
        3,
    )
    assert sorted(applied["aggregates"]) == sorted(written)
    assert (applied["actor"], applied["door"]) == ("alice", "http")
    assert (refused["result"], refused["reason"], refused["items"]) == ("refused", "refused", 1)
    transport = httpx.ASGITransport(app=access_runtime.app(), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as browser:
        assert (await signed_in(browser, admins.admin_a)).status_code == 303
        page = await browser.get("/audit")
        download = await browser.get("/audit.csv")
    assert page.status_code == 200
    assert "× 3 items (one batch)" in page.text
    assert [row["items"] for row in csv.DictReader(io.StringIO(download.text))] == ["1", "3"]


async def test_single_commands_are_a_row_each_and_an_aggregate_finds_its_batch(
    access_runtime: Runtime, admins: Admins
) -> None:
    async with client_for(access_runtime, admins.admin_a) as alice:
        for _ in range(2):
            assert (await alice.post("/factory/feedback", json=FEEDBACK)).status_code == 201
        batch = await alice.post("/factory/feedback:batch", json={"items": [FEEDBACK] * 2})
        second = batch.json()["items"][1]["feedbackId"]
        found = await every_page(alice)
        by_aggregate = await every_page(alice, aggregate=second)
    assert [row["items"] for row in found] == [2, 1, 1]
    assert [row["items"] for row in by_aggregate] == [2]


async def test_the_table_keeps_one_key_and_an_older_table_is_given_it(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute(OLDER)
        await conn.execute(
            f"INSERT INTO {TABLE} (tenant_id, actor, roles, service, at, command, command_id, "
            "aggregates, result) VALUES ('t', 'ann', '{}', false, now(), 'C', 'c', '{}', "
            "'applied')"
        )
        for _ in range(2):  # every process's start runs it; the second finds it done
            await ensure_table(conn)
        indexes = await conn.fetch(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = $1", TABLE
        )
        assert [(i["indexname"], i["indexdef"].split(" USING ")[1]) for i in indexes] == [
            ("audit_trail_key", "btree (tenant_id, id)")
        ]
        assert await conn.fetchval(f"SELECT items FROM {TABLE} WHERE actor = 'ann'") == 1
    finally:
        await conn.close()
