"""SPEC W58 on a real PostgreSQL, the nightly runner and the HTTP API in-process: a case run on
demand by its confirmer and then by a night keeps the last run of each runner apart, its
pass-rate history has one line per runner, and the digest reads a verdict per runner
(decisions D52, D53)."""

from typing import Any
from uuid import UUID

from services.digests.build import health
from services.digests.sources import eval_cases
from services.evals.domain import EvalCase
from services.followers.waiting import wait_for_position
from services.store.event_store import EVENTS_TABLE
from tests.integration.test_nightly import (
    NIGHT,
    ORDER,
    Agent,
    Door,
    auth,
    confirmed_case,
    door,
    runner,
    standin,
)

__all__ = ["door", "standin"]  # the fixtures of the nightly tests, used here

ASK = "Welchen Stundenansatz verrechne ich?"


async def settled(door: Door) -> None:
    pool = door.runtime.pool
    head = await pool.fetchval(f"SELECT max(notification_id) FROM {EVENTS_TABLE}")
    await wait_for_position(pool, "rm_eval_cases", head, 20)


async def test_a_case_run_on_demand_and_by_a_night_shows_each_runner_apart(
    door: Door, standin: str
) -> None:
    case_id = await confirmed_case(door, ASK)
    manual = await door.http.post(
        f"/factory/evals/cases/{case_id}/runs", json={"conversations": 1},
        headers=auth(door.keys.a),
    )  # fmt: skip
    assert manual.status_code == 201, manual.text
    assert (manual.json()["ranBy"], manual.json()["runner"]) == ("alice", "manual")
    await runner(door, Agent(standin), max_cases=3, conversations_per_case=1)(ORDER)
    await settled(door)

    read = await door.http.get(f"/factory/evals/cases/{case_id}", headers=auth(door.keys.a))
    assert read.status_code == 200, read.text
    case: dict[str, Any] = read.json()
    # The night ran as alice, the confirmer (W101): same ranBy, another runner (W58).
    assert (case["lastRun"]["runner"], case["lastRun"]["night"]) == ("night", NIGHT)
    assert [(r["runner"], r["ranBy"], r["night"]) for r in case["lastRuns"]] == [
        ("night", "alice", NIGHT),
        ("manual", "alice", None),
    ]
    assert case["lastRuns"][1]["runId"] == manual.json()["runId"]
    assert [r["runner"] for r in case["runs"]] == ["night", "manual"]
    assert [(h["runner"], h["ranBy"], h["runs"]) for h in case["history"]] == [
        ("night", "alice", 1),
        ("manual", "alice", 1),
    ]
    for run, runner_is in ((case["lastRuns"][0], "night"), (manual.json(), "manual")):
        record = await door.http.get(run["threads"][0]["link"], headers=auth(door.keys.a))
        assert record.status_code == 200, record.text
        assert (record.json()["runner"], record.json()["ranBy"]) == (runner_is, "alice")
    listed = await door.http.get("/factory/evals/cases", headers=auth(door.keys.a))
    (item,) = [c for c in listed.json()["items"] if c["caseId"] == case_id]
    assert [r["runner"] for r in item["lastRuns"]] == ["night", "manual"]

    # The digest reads one verdict per runner and counts each apart.
    (fact,) = await eval_cases(door.runtime.pool, tenant_of(door, case_id))
    assert {(key.runner, key.ran_by) for key in fact.verdicts} == {
        ("night", "alice"),
        ("manual", "alice"),
    }
    figures = health([fact])
    assert [(r.runner, r.ran_by, r.with_run) for r in figures.runners] == [
        ("night", None, 1),
        ("manual", "someone", 1),  # the digest names no person (decisions D135)
    ]
    assert figures.with_run == 1  # the headline is the night's alone


def tenant_of(door: Door, case_id: str) -> str:
    case: EvalCase = door.runtime.store.repository.get(UUID(case_id))
    return str(case.tenant_id)
