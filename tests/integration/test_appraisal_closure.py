"""Closing a task on a real PostgreSQL (SPEC M45, M46): the task system's TaskClosed through
``POST /factory/events``, noted once per transition and appraised once; a follow-up staged on
its own topic only on done with residue or a cut-short run, citing the task by id."""

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from eventsourcing.utils import get_topic

from contracts import topics
from projections.appraisal import AppraisalFacts
from services.appraisal.closure import TaskClosure
from services.appraisal.published import PUBLICATIONS
from services.processes.bootstrap import Runtime
from services.projecting.live import ProjectionRunner
from services.store.event_store import EVENTS_TABLE

AT = datetime.now(UTC) - timedelta(hours=1)
CE = {"Content-Type": "application/cloudevents+json"}


def cloudevent(event_id: str, type_: str, data: dict[str, Any]) -> bytes:
    return json.dumps(
        {"specversion": "1.0", "id": event_id, "source": "urn:tasks", "type": type_,
         "data": data}
    ).encode()  # fmt: skip


async def post(client: httpx.AsyncClient, raw: bytes) -> httpx.Response:
    return await client.post("/factory/events", content=raw, headers=CE)


async def a_run(client: httpx.AsyncClient, run_id: str, counters: dict[str, int]) -> None:
    data = {"runId": run_id, "agentId": "coach", "outcome": "succeeded", "inputRef": "urn:in:1",
            "completedAt": AT.isoformat(), "counters": counters}  # fmt: skip
    raw = cloudevent(f"run/{run_id}", "factory.runs.v1.RunCompleted", data)
    assert (await post(client, raw)).status_code == 201


def task_closed(transition: str, task: str, status: str, runs: list[str]) -> bytes:
    data = {"taskId": task, "transitionId": transition, "status": status, "runIds": runs,
            "closedAt": AT.isoformat(), "taskName": "never copied"}  # fmt: skip
    return cloudevent(f"tc/{transition}", "factory.tasks.v1.TaskClosed", data)


async def caught_up(runtime: Runtime) -> None:
    runner = ProjectionRunner(runtime.store, runtime.pool, AppraisalFacts())
    await runner.start()
    await runner.catch_up()


async def staged(runtime: Runtime) -> list[dict[str, Any]]:
    rows = await runtime.pool.fetch(
        f"SELECT state FROM {EVENTS_TABLE} WHERE topic = $1",
        get_topic(TaskClosure.FollowUpStaged),
    )
    return [json.loads(bytes(row["state"])) for row in rows]


async def test_a_cut_short_run_accepted_as_done_stages_one_follow_up_citing_the_task(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    await a_run(client, "run-cut", {"ceilingHits": 1})  # cut short by the owner's ceiling
    await a_run(client, "run-plain", {"stepNulls": 0})
    closings = [task_closed("tr-1", "task-1a2b", "done", ["run-cut"]),
                task_closed("tr-2", "task-3c4d", "dropped", ["run-cut"]),
                task_closed("tr-3", "task-5e6f", "done", ["run-plain"])]  # fmt: skip
    for raw in closings:
        assert (await post(client, raw)).status_code == 201
    again = await post(client, task_closed("tr-1", "task-1a2b", "done", ["run-cut"]))
    assert again.status_code == 200  # the same transition: noted once
    await caught_up(runtime)
    answer = await client.post("/factory/appraisal/closures:appraise")
    assert answer.status_code == 200, answer.text
    by_task = {c["taskId"]: c for c in answer.json()["closures"]}
    assert {task: c["followUp"] for task, c in by_task.items()} == {
        "task-1a2b": True,  # done and cut short (M45)
        "task-3c4d": False,  # dropped: the owner declined it
        "task-5e6f": False,  # nothing signed
    }
    assert by_task["task-1a2b"]["label"] == "distress"  # distress alone would stage nothing
    (follow_up,) = await staged(runtime)
    assert follow_up["task_id"] == "task-1a2b"  # M46: by id
    assert "never copied" not in json.dumps(follow_up)
    await caught_up(runtime)
    later = await client.post("/factory/appraisal/closures:appraise")
    assert later.json()["closures"] == []  # each transition once
    assert len(await staged(runtime)) == 1


def test_the_follow_up_goes_out_on_a_topic_of_its_own() -> None:
    (publication,) = PUBLICATIONS
    assert publication.topic == topics.FOLLOW_UP_STAGED
    assert publication.event is TaskClosure.FollowUpStaged


async def test_the_seed_s_rows_arrive_on_run_completed_and_sign_the_run(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    """M28 (decisions D154), end to end through the event door and the read model: a boredom
    notice −0.5 self, a backlog decrease +0.5 (no pride), a triaged request closed without a
    draft −0.5 owner (one with a draft counts through its draft); null steps sign nothing."""
    data = {"runId": "run-seed", "agentId": "coach", "outcome": "succeeded",
            "inputRef": "urn:in:1", "completedAt": AT.isoformat(),
            "counters": {"boredomNotices": 1, "ownerBacklogDecrease": 2, "stepNulls": 3},
            "drafts": [{"draftId": "d-1", "status": "sent_unchanged"}],
            "requests": [{"requestId": "rq-1", "closed": True},
                         {"requestId": "rq-2", "closed": True, "draftId": "d-1"},
                         {"requestId": "rq-3", "closed": False}]}  # fmt: skip
    raw = cloudevent("run/run-seed", "factory.runs.v1.RunCompleted", data)
    assert (await post(client, raw)).status_code == 201
    await caught_up(runtime)
    run = (await client.get("/factory/appraisal/runs/run-seed")).json()
    signed = sorted((o["outcome"], o["sign"], o["agency"], o["cite"]) for o in run["outcomes"])
    assert signed == [
        ("boredomNotices", -0.5, "self", "boredomNotices"),
        ("draft-sent-unchanged", 1.0, "self", "d-1"),
        ("ownerBacklogDecrease", 0.5, "self", "ownerBacklogDecrease"),
        ("request-closed-without-draft", -0.5, "owner", "rq-1"),
    ]
