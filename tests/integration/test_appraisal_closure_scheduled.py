"""Closed tasks appraised with no caller, on a real PostgreSQL (SPEC M45, M46, decisions D39):
the scheduler's ``AppraiseClosures`` appraises each transition noted and projected, once —
under a redelivered TaskClosed, the order given again, the manual route after it, and a
rebuild of the read model from the log."""

from datetime import UTC, datetime

import httpx

from projections.appraisal import SCHEMA, AppraisalFacts, closure_row
from services.processes.bootstrap import Runtime
from services.processes.scheduled import carried_out_by
from services.projecting.rebuild import rebuild_many
from services.scheduling.orders import AppraiseClosures
from tests.integration.test_appraisal_closure import (
    a_run,
    caught_up,
    post,
    staged,
    task_closed,
)


def order(hour: int) -> AppraiseClosures:
    now = datetime.now(UTC)
    return AppraiseClosures(now.replace(hour=hour, minute=0, second=0, microsecond=0), now)


async def test_the_scheduler_appraises_each_closed_task_once_without_a_caller(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    await a_run(client, "run-cut", {"ceilingHits": 1})
    await a_run(client, "run-plain", {"stepNulls": 0})
    assert (
        await post(client, task_closed("tr-a", "task-a", "done", ["run-cut"]))
    ).status_code == 201
    assert (
        await post(client, task_closed("tr-b", "task-b", "done", ["run-plain"]))
    ).status_code == 201
    # The task system sends the first transition again: noted once (M45).
    assert (
        await post(client, task_closed("tr-a", "task-a", "done", ["run-cut"]))
    ).status_code == 200
    await caught_up(runtime)
    appraise = carried_out_by(runtime.given(), AppraiseClosures)
    await appraise(order(9))
    (follow_up,) = await staged(runtime)
    assert follow_up["task_id"] == "task-a"  # done and cut short: one follow-up, by id (M46)
    await caught_up(runtime)
    tenant = await runtime.pool.fetchval(f"SELECT tenant_id FROM {SCHEMA}.closures LIMIT 1")
    a = await closure_row(runtime.pool, tenant, "tr-a")
    b = await closure_row(runtime.pool, tenant, "tr-b")
    assert a is not None
    assert b is not None
    assert (a["label"], a["follow_up"]) == ("distress", True)
    assert b["label"] is not None
    assert b["follow_up"] is False

    # The same order again, the next tick's, and the manual nudge: nothing is waiting.
    await appraise(order(9))
    await appraise(order(10))
    nudged = await client.post("/factory/appraisal/closures:appraise")
    assert nudged.status_code == 200, nudged.text
    assert nudged.json()["closures"] == []
    assert len(await staged(runtime)) == 1

    # A replay of the log into a fresh read model keeps each transition appraised.
    await rebuild_many(runtime.store, runtime.pool, [AppraisalFacts()])
    await appraise(order(11))
    assert len(await staged(runtime)) == 1


async def test_a_closure_the_read_model_has_not_projected_waits_for_the_next_tick(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    await a_run(client, "run-cut", {"ceilingHits": 1})
    await caught_up(runtime)
    assert (
        await post(client, task_closed("tr-c", "task-c", "done", ["run-cut"]))
    ).status_code == 201
    appraise = carried_out_by(runtime.given(), AppraiseClosures)
    await appraise(order(9))  # noted in the log, not yet in the read model: nothing to read
    assert await staged(runtime) == []
    await caught_up(runtime)
    await appraise(order(10))
    assert [f["task_id"] for f in await staged(runtime)] == ["task-c"]
