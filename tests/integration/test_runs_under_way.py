"""``GET /factory/evals/cases/{id}/runs/under-way`` on a real PostgreSQL, the HTTP API
in-process: a run shows there while its conversations run, to its tenant only, and leaves it
once recorded (decisions D80)."""

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.test_nightly import SCRIPT, Door, auth, confirmed_case, door
from tests.standin import standin_agent

__all__ = ["door"]  # the nightly tests' fixture, used here with a slower agent

# Every answer takes a second: a run of two conversations is under way long enough to be seen.
SLOW = {**SCRIPT, "delaySeconds": 1.0}


@pytest.fixture
def standin(tmp_path: Path) -> Iterator[str]:
    with standin_agent(SLOW, tmp_path) as url:
        yield url


async def test_a_run_is_under_way_while_its_conversations_run_and_leaves_once_recorded(
    door: Door,
) -> None:
    case_id = await confirmed_case(door, "Welchen Stundenansatz verrechne ich?")
    under_way = f"/factory/evals/cases/{case_id}/runs/under-way"
    run = asyncio.create_task(
        door.http.post(
            f"/factory/evals/cases/{case_id}/runs",
            json={"conversations": 2},
            headers=auth(door.keys.a),
        )
    )
    seen: list[dict[str, object]] = []
    while not run.done() and not seen:
        listed = await door.http.get(under_way, headers=auth(door.keys.a))
        assert listed.status_code == 200, listed.text
        seen = listed.json()["items"]
        other = await door.http.get(under_way, headers=auth(door.keys.b))
        assert other.json()["items"] == []  # another tenant sees nothing of it
        await asyncio.sleep(0.05)
    assert len(seen) == 1, "the run was never seen under way"
    (item,) = seen
    assert (item["ranBy"], item["conversations"]) == ("alice", 2)
    assert item["done"] in (0, 1)
    recorded = await run
    assert recorded.status_code == 201, recorded.text
    assert item["runId"] == recorded.json()["runId"]
    after = await door.http.get(under_way, headers=auth(door.keys.a))
    assert after.json() == {"items": []}
