"""``/factory/operations`` on real PostgreSQL (decisions D94): readers are the instance's
figures; a parked event's content and its retry belong to the tenant of its aggregate, and
everything else parked is a count; the retry is the CLI's release."""

import asyncio
from typing import Any

import asyncpg

from services.followers.parked import list_parked
from services.followers.parking import park_event
from services.processes.bootstrap import Runtime
from tests.conftest import Keys, client_for

FEEDBACK = {
    "projectId": "p",
    "subjectKind": "run",
    "subjectRef": "r",
    "kind": "rating",
    "rating": 4,
}


async def parked_feedback(runtime: Runtime, keys: Keys) -> dict[str, int]:
    """Feedback of tenant A (alice) and of tenant B (bob), each event parked by a reader as
    if it had kept failing on it; answers each tenant's parked position."""
    for key in (keys.a, keys.b):
        async with client_for(runtime, key) as http:
            assert (await http.post("/factory/feedback", json=FEEDBACK)).status_code == 201
    notifications = await asyncio.to_thread(runtime.store.recorder.select_notifications, 1, 10)
    assert len(notifications) == 2
    async with runtime.pool.acquire() as conn:
        for notification in notifications:
            await park_event(conn, "rm_feedback_list", notification, ValueError("broken"), 3)
    a, b = notifications
    return {"a": a.id, "b": b.id}


async def get(runtime: Runtime, key: str, path: str) -> Any:
    async with client_for(runtime, key) as http:
        answer = await http.get(path)
    assert answer.status_code == 200, answer.text
    return answer.json()


async def test_a_tenant_sees_its_own_parked_events_and_a_count_of_the_rest(
    runtime: Runtime, keys: Keys
) -> None:
    at = await parked_feedback(runtime, keys)
    ours = await get(runtime, keys.a, "/factory/operations/parked")
    assert [(p["reader"], p["logPosition"]) for p in ours["items"]] == [
        ("rm_feedback_list", at["a"])
    ]
    assert "ValueError: broken" in ours["items"][0]["reason"]
    assert (ours["own"], ours["others"]) == (1, 1)
    theirs = await get(runtime, keys.b, "/factory/operations/parked")
    assert [p["logPosition"] for p in theirs["items"]] == [at["b"]]
    # An Observer (the read-only key's implied role) sees the counts, no content.
    looking = await get(runtime, keys.a_read_only, "/factory/operations/parked")
    assert (looking["items"], looking["own"], looking["others"]) == ([], 1, 1)


async def test_another_tenant_cannot_retry_and_the_owner_releases_as_the_cli_does(
    runtime: Runtime, keys: Keys
) -> None:
    at = await parked_feedback(runtime, keys)
    path = f"/factory/operations/parked/rm_feedback_list/{at['a']}/retry"
    async with client_for(runtime, keys.b) as bob:
        refused = await bob.post(path)
    assert refused.status_code == 404, refused.text
    assert not any(p.released for p in await list_parked(runtime.pool, "rm_feedback_list"))

    async with client_for(runtime, keys.a) as alice:
        retried = await alice.post(path)
    assert retried.status_code == 200, retried.text
    assert retried.json() == {"released": 1}
    released = {p.position: p.released for p in await list_parked(runtime.pool)}
    assert released == {at["a"]: True, at["b"]: False}


async def test_readers_are_listed_with_what_stops_them(
    runtime: Runtime, keys: Keys, database_url: str
) -> None:
    db = await asyncpg.connect(database_url)
    try:
        await db.execute(
            "INSERT INTO reader_positions (reader, position) VALUES ('rm_inbox', 0) "
            "ON CONFLICT DO NOTHING"
        )
    finally:
        await db.close()
    readers = await get(runtime, keys.a, "/factory/operations/readers")
    inbox = next(r for r in readers["items"] if r["name"] == "rm_inbox")
    assert inbox["state"] == "new"
    assert inbox["problems"] == ["not running"]
