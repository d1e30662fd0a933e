"""Datasets on a real PostgreSQL (SPEC C13–C21, C24, C25, C53): harvested runs become tasks,
corrections supply expected outcomes in either order, snapshots are immutable and read back
byte for byte, and every read and write stays in its tenant."""

import json
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
from eventsourcing.utils import get_topic
from prometheus_client import REGISTRY

from contracts.neighbours import ArtifactValidated, RunCompleted
from projections.datasets import Datasets, dataset_tasks
from services.bus.decisions import Outcome
from services.bus.issued import Issued
from services.datasets.domain import Dataset, HarvestedRun
from services.datasets.ids import harvested_run_id
from services.followers.waiting import wait_for_position
from services.processes.bootstrap import Runtime
from services.processes.contexts import read_models
from services.processes.read_model_gauges import refresh
from services.projecting.live import ProjectionRunner
from services.projecting.rebuild import rebuild
from services.store.event_store import EVENTS_TABLE
from tests.conftest import Keys, event_count

BASE = "/factory/evaluation/datasets"


def run_event(run_id: str, input_ref: str, **fields: Any) -> dict[str, Any]:
    return {
        "runId": run_id,
        "agentId": "Office/Coach",
        "outcome": "succeeded",
        "inputRef": input_ref,
        "completedAt": "2026-11-30T10:00:00Z",
        **fields,
    }


async def harvest(runtime: Runtime, tenant: str, data: dict[str, Any], key: str) -> Outcome:
    """A RunCompleted as the inbound path hands it to the bus (tolerant, with an identity)."""
    command = RunCompleted.model_validate(data, extra="allow")
    return await runtime.bus.execute(
        Issued(command, tenant, "run-control", f"ce/{key}", datetime.now(UTC), identity=key)
    )


async def artifact(client: httpx.AsyncClient, text: str, key: str | None = None) -> str:
    headers = {} if key is None else {"Authorization": f"Bearer {key}"}
    response = await client.post("/factory/artifacts", content=text.encode(), headers=headers)
    assert response.status_code == 201, response.text
    return str(response.json()["ref"])


async def correct(client: httpx.AsyncClient, run_id: str, ref: str) -> None:
    body = {
        "projectId": "p",
        "subjectKind": "run",
        "subjectRef": run_id,
        "kind": "correction",
        "correctedArtifactRef": ref,
    }
    response = await client.post("/factory/feedback", json=body)
    assert response.status_code == 201, response.text


async def settled(runtime: Runtime) -> None:
    """Until the datasets read model has applied every write so far."""
    head = await runtime.pool.fetchval(f"SELECT max(notification_id) FROM {EVENTS_TABLE}") or 0
    assert await wait_for_position(runtime.pool, "rm_datasets", head, 20) >= head


async def snapshot(
    runtime: Runtime, client: httpx.AsyncClient, dataset: str, **kwargs: Any
) -> httpx.Response:
    """A snapshot of the task set once every write so far is in it."""
    await settled(runtime)
    return await client.post(f"{BASE}/{dataset}/snapshot", **kwargs)


async def tasks_of(client: httpx.AsyncClient, dataset: str, version: int) -> list[dict[str, Any]]:
    response = await client.get(f"{BASE}/{dataset}/versions/{version}")
    assert response.status_code == 200, response.text
    return list(json.loads(response.content)["tasks"])


async def test_a_run_harvested_twice_is_one_task_candidate_carrying_the_whole_run(
    runtime: Runtime,
) -> None:
    """SPEC C24: a deterministic id from tenant + runId; the event keeps the typed run."""
    data = run_event("r-1", "urn:x", serves=["goal:g1"], counters={"loopStops": 2},
                     somethingNew="ignored")  # fmt: skip
    first = await harvest(runtime, "t1", data, "k1")
    again = await harvest(runtime, "t1", data, "k2")  # another message, the same run
    assert (first.result.created, again.result.created) == (True, False)
    harvested: HarvestedRun = runtime.store.repository.get(harvested_run_id("t1", "r-1"))
    assert isinstance(harvested.run, RunCompleted)
    assert harvested.run.counters is not None
    assert harvested.run.counters.loop_stops == 2
    assert harvested.run.serves == ["goal:g1"]
    assert harvested.dataset_id == "agent:Office/Coach"
    topic = get_topic(HarvestedRun.Harvested)
    stored = await runtime.pool.fetchval(
        f"SELECT count(*) FROM {EVENTS_TABLE} WHERE topic = $1", topic
    )
    assert stored == 1
    [event] = [
        n
        for n in runtime.store.recorder.select_notifications(start=1, limit=100)
        if n.topic == topic
    ]
    assert b"somethingNew" not in event.state  # a neighbour's unknown field is not kept


async def test_a_correction_before_or_after_its_run_gives_the_same_task(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """The correction supplies the expected outcome, whatever the order."""
    runtime.start_projections(["datasets"])
    question, fixed = await artifact(client, "question"), await artifact(client, "fixed")
    # Run r-a: the correction arrives first; run r-b: the run does.
    await correct(client, "r-a", fixed)
    await harvest(runtime, tenant_of(keys, 0), run_event("r-a", question), "a")
    await harvest(runtime, tenant_of(keys, 0), run_event("r-b", question), "b")
    await correct(client, "r-b", fixed)
    response = await snapshot(runtime, client, "agent:Office/Coach")
    assert response.status_code == 201, response.text
    tasks = await tasks_of(client, "agent:Office/Coach", 1)
    assert [t["taskId"] for t in tasks] == ["run:r-a", "run:r-b"]
    for task in tasks:
        assert (task["expectedRef"], task["expectedFrom"]) == (fixed, "correction")
        assert task["inputRef"] == question
        assert task["scoringRule"] == "match-expected"
    strip = [{k: v for k, v in t.items() if k not in {"taskId", "provenance"}} for t in tasks]
    assert strip[0] == strip[1]
    # A rebuild from position 0 composes the same tasks (handlers read only event data).
    await rebuild(runtime.store, runtime.pool, Datasets())
    assert await dataset_tasks(runtime.pool, tenant_of(keys, 0), "agent:Office/Coach") == tasks


async def test_a_snapshot_is_immutable_and_read_back_byte_identical(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """SPEC C15, C18–C21: read, add tasks, snapshot again, read the old version again."""
    runtime.start_projections(["datasets"])
    tenant = tenant_of(keys, 0)
    question, answer = await artifact(client, "q1"), await artifact(client, "a1")
    await harvest(runtime, tenant, run_event("r-1", question, outputRef=answer), "1")
    await harvest(runtime, tenant, run_event("r-2", question, outcome="failed"), "2")
    first = await snapshot(
        runtime, client, "agent:Office/Coach", headers={"Idempotency-Key": "snap-1"}
    )
    assert first.status_code == 201, first.text
    record = first.json()
    assert (record["version"], record["taskCount"]) == (1, 1)  # r-2 has no expected outcome
    assert record["classification"] == "tenant-confidential"
    assert record["target"] == "Office/Coach"
    assert record["snapshotRef"].startswith("artifact:sha256:")
    old = (await client.get(f"{BASE}/agent:Office/Coach/versions/1")).content

    # The same key again answers the same version, appending nothing.
    count = await event_count(runtime)
    again = await snapshot(
        runtime, client, "agent:Office/Coach", headers={"Idempotency-Key": "snap-1"}
    )
    assert again.status_code == 200
    assert again.json()["version"] == 1
    assert again.json()["created"] is False
    assert await event_count(runtime) == count

    # More tasks (a curated one, a validation, a harvested one), then version 2.
    await harvest(runtime, tenant, run_event("r-3", question, outputRef=answer), "3")
    curated = await client.post(
        f"{BASE}/agent:Office/Coach/tasks",
        json={"taskId": "c-1", "inputRef": question, "expectedRef": answer},
    )
    assert curated.status_code == 201, curated.text
    missing = {"taskId": "c-2", "inputRef": "artifact:sha256:" + "0" * 64, "expectedRef": answer}
    refused = await client.post(f"{BASE}/agent:Office/Coach/tasks", json=missing)
    assert (refused.status_code, refused.json()["field"]) == (422, "inputRef")
    await runtime.bus.execute(
        Issued(
            ArtifactValidated.model_validate(
                {
                    "artifactRef": answer,
                    "validator": "lint",
                    "outcome": "passed",
                    "validatedAt": "2026-11-30T11:00:00Z",
                }
            ),
            tenant,
            "artifacts",
            "ce/v1",
            datetime.now(UTC),
            identity="v1",
        )
    )
    second = await snapshot(runtime, client, "agent:Office/Coach")
    assert (second.status_code, second.json()["version"]) == (201, 2)
    assert second.json()["taskCount"] == 3
    tasks = await tasks_of(client, "agent:Office/Coach", 2)
    assert all(t["validations"][0]["outcome"] == "passed" for t in tasks)  # SPEC C25

    # The old version reads the same bytes, forever.
    assert (await client.get(f"{BASE}/agent:Office/Coach/versions/1")).content == old

    # Any attempt to alter a published version is refused, machine-readably.
    for method in ("PUT", "PATCH", "DELETE"):
        refused = await client.request(method, f"{BASE}/agent:Office/Coach/versions/1", json={})
        assert refused.status_code == 409, refused.text
        assert refused.json()["reason"] == "version-immutable"
    named = await snapshot(
        runtime, client, "agent:Office/Coach", json={"version": 1}
    )  # other content
    assert (named.status_code, named.json()["reason"]) == (409, "version-immutable")
    # Naming the version just published, with the same content, answers it (C20).
    same = await snapshot(runtime, client, "agent:Office/Coach", json={"version": 2})
    assert (same.status_code, same.json()["version"]) == (200, 2)

    listed = (await client.get(BASE)).json()["items"]
    [coach] = [d for d in listed if d["datasetId"] == "agent:Office/Coach"]
    assert [(v["version"], v["taskCount"]) for v in coach["versions"]] == [(1, 1), (2, 3)]
    assert coach["classification"] == "tenant-confidential"

    # A removal changes the next snapshot, never a published one.
    removed = await client.delete(f"{BASE}/agent:Office/Coach/tasks/run:r-1")
    assert removed.status_code == 200
    third = await snapshot(runtime, client, "agent:Office/Coach")
    assert third.json()["taskCount"] == 2
    assert (await client.get(f"{BASE}/agent:Office/Coach/versions/1")).content == old

    published = await runtime.pool.fetchval(
        f"SELECT count(*) FROM {EVENTS_TABLE} WHERE topic = $1",
        get_topic(Dataset.VersionPublished),
    )
    assert published == 3


async def test_another_tenant_sees_nothing_of_a_dataset(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """SPEC C16, C51: tasks of a tenant's runs stay in that tenant."""
    runtime.start_projections(["datasets"])
    tenant = tenant_of(keys, 0)
    question, answer = await artifact(client, "q"), await artifact(client, "a")
    await harvest(runtime, tenant, run_event("r-1", question, outputRef=answer), "1")
    assert (await snapshot(runtime, client, "agent:Office/Coach")).status_code == 201
    other = {"Authorization": f"Bearer {keys.b}"}
    assert (await client.get(BASE, headers=other)).json()["items"] == []
    seen = await client.get(f"{BASE}/agent:Office/Coach/versions/1", headers=other)
    assert seen.status_code == 404
    # Their own snapshot of the same name finds no tasks of ours.
    theirs = await snapshot(runtime, client, "agent:Office/Coach", headers=other)
    assert theirs.status_code == 404
    # A reader without the run scope cannot publish.
    reader = {"Authorization": f"Bearer {keys.a_no_scope}"}
    assert (
        await snapshot(runtime, client, "agent:Office/Coach", headers=reader)
    ).status_code == 403
    assert (await client.get(BASE, headers=reader)).status_code == 200


async def test_without_the_artifact_store_nothing_is_published(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """SPEC C53: the artifact store is required: a clear error, no half-published version."""
    runtime.start_projections(["datasets"])
    tenant = tenant_of(keys, 0)
    question, answer = await artifact(client, "q"), await artifact(client, "a")
    await harvest(runtime, tenant, run_event("r-1", question, outputRef=answer), "1")
    await runtime.pool.execute("ALTER TABLE artifacts RENAME TO artifacts_away")
    try:
        count = await event_count(runtime)
        failed = await snapshot(runtime, client, "agent:Office/Coach")
        assert failed.status_code == 503, failed.text
        assert failed.json()["error"] == "artifact-store-unavailable"
        assert await event_count(runtime) == count
    finally:
        await runtime.pool.execute("ALTER TABLE artifacts_away RENAME TO artifacts")
    assert (await snapshot(runtime, client, "agent:Office/Coach")).status_code == 201


async def test_sharing_needs_a_recorded_consent_and_gives_an_anonymised_copy(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """SPEC C17: refused without consent; with it, a copy without provenance in the other
    tenant, its artifacts stored there."""
    runtime.start_projections(["datasets"])
    tenant = tenant_of(keys, 0)
    question, answer = await artifact(client, "q"), await artifact(client, "a")
    await harvest(runtime, tenant, run_event("r-secret", question, outputRef=answer), "1")
    await harvest(
        runtime, tenant, run_event("r-foreign", "https://elsewhere/x", outputRef=answer), "2"
    )
    assert (await snapshot(runtime, client, "agent:Office/Coach")).status_code == 201
    to_tenant = tenant_of(keys, 1)
    share = f"{BASE}/agent:Office/Coach/versions/1/shares"
    count = await event_count(runtime)
    refused = await client.post(share, json={"toTenant": to_tenant})
    assert refused.status_code == 403, refused.text
    assert refused.json()["reason"] == "consent-required"
    assert await event_count(runtime) == count
    other = {"Authorization": f"Bearer {keys.b}"}
    leaked = await client.get(f"/factory/artifacts/{question}", headers=other)
    assert leaked.status_code == 404  # nothing was copied before the refusal

    consent = await client.post(f"{BASE}/agent:Office/Coach/consents", json={"toTenant": to_tenant})
    assert consent.status_code == 201, consent.text
    shared = await client.post(share, json={"toTenant": to_tenant})
    assert shared.status_code == 201, shared.text
    copy = shared.json()
    assert copy["classification"] == "anonymised"
    assert copy["taskCount"] == 1
    repeated = await client.post(share, json={"toTenant": to_tenant})
    assert (repeated.status_code, repeated.json()["version"]) == (200, copy["version"])

    read = await client.get(f"{BASE}/{copy['datasetId']}/versions/1", headers=other)
    assert read.status_code == 200, read.text
    text = read.content.decode()
    for secret in ("r-secret", "r-foreign", "Coach", tenant, "provenance", "elsewhere"):
        assert secret not in text
    [task] = json.loads(text)["tasks"]
    assert (task["inputRef"], task["expectedRef"]) == (question, answer)
    fetched = await client.get(f"/factory/artifacts/{question}", headers=other)
    assert fetched.status_code == 200  # re-stored under the other tenant
    listed = (await client.get(BASE, headers=other)).json()["items"]
    assert [d["classification"] for d in listed] == ["anonymised"]


async def test_removing_a_task_the_dataset_does_not_hold_is_not_found_and_appends_nothing(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """SPEC C14, C16, C51: a removal names a task the caller's tenant's dataset holds (curated,
    or a run harvested into it); any other is 404, nothing is appended and no phantom dataset
    is listed. The route takes no body, as other body-less routes do."""
    runtime.start_projections(["datasets"])
    tenant = tenant_of(keys, 0)
    question, answer = await artifact(client, "q"), await artifact(client, "a")
    await harvest(runtime, tenant, run_event("r-1", question, outputRef=answer), "1")
    curated = await client.post(
        f"{BASE}/named-set/tasks",
        json={"taskId": "c-1", "inputRef": question, "expectedRef": answer},
    )
    assert curated.status_code == 201, curated.text
    count = await event_count(runtime)
    other = {"Authorization": f"Bearer {keys.b}"}
    for path, headers in (
        ("nope/tasks/nope", {}),  # neither the dataset nor the task
        ("named-set/tasks/nope", {}),  # a dataset without that task
        ("agent:Office/Coach/tasks/run:r-2", {}),  # a run never harvested
        ("named-set/tasks/run:r-1", {}),  # a run harvested into another dataset
        ("named-set/tasks/c-1", other),  # another tenant's (C16)
        ("agent:Office/Coach/tasks/run:r-1", other),
    ):
        missing = await client.delete(f"{BASE}/{path}", headers=headers)
        assert missing.status_code == 404, (path, missing.text)
        assert missing.json()["error"] == "not-found"
    with_body = await client.request("DELETE", f"{BASE}/named-set/tasks/c-1", json={"x": 1})
    assert (with_body.status_code, with_body.json()["field"]) == (422, "body")
    assert await event_count(runtime) == count
    await settled(runtime)
    listed = [d["datasetId"] for d in (await client.get(BASE)).json()["items"]]
    assert listed == ["agent:Office/Coach", "named-set"]
    assert (await client.get(BASE, headers=other)).json()["items"] == []

    # A task held is removed once; then the dataset no longer holds it.
    for path in ("named-set/tasks/c-1", "agent:Office/Coach/tasks/run:r-1"):
        assert (await client.delete(f"{BASE}/{path}")).status_code == 200
        assert (await client.delete(f"{BASE}/{path}")).status_code == 404
    assert await event_count(runtime) == count + 3  # the harvested one opens its dataset


def tenant_of(keys: Keys, index: int) -> str:
    """The tenant of a test key: 0 is tenant A's writer, 1 tenant B's."""
    return str(json.loads(keys.entries)[index]["tenant"])


async def test_a_snapshot_waits_for_the_write_named_by_min_position(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    """Read-your-writes: a curation's position, passed as minPosition, is in the snapshot."""
    runtime.start_projections(["datasets"])
    question, answer = await artifact(client, "q"), await artifact(client, "a")
    curated = await client.post(
        f"{BASE}/named-set/tasks",
        json={"taskId": "c-1", "inputRef": question, "expectedRef": answer},
    )
    assert curated.status_code == 201, curated.text
    published = await client.post(
        f"{BASE}/named-set/snapshot", params={"minPosition": curated.json()["position"]}
    )
    assert published.status_code == 201, published.text
    assert (published.json()["taskCount"], published.json()["target"]) == (1, "named-set")


async def test_the_datasets_gauge_counts_a_dataset_once_it_is_published(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    """SPEC C50: connectsoft.factory.learning.datasets, by tenant and target, read from the
    read model; the target (an id of the tenant's) is a label value only where tenant labels
    are configured."""
    runtime.start_projections(["datasets"])
    target = f"gauge-{uuid.uuid4().hex[:8]}"

    async def gauge() -> float | None:
        await settled(runtime)
        await refresh(runtime.pool)
        return REGISTRY.get_sample_value(
            "connectsoft_factory_learning_datasets", {"tenant": "", "target": ""}
        )

    question, answer = await artifact(client, "q"), await artifact(client, "a")
    body = {"taskId": "c-1", "inputRef": question, "expectedRef": answer}
    assert (await client.post(f"{BASE}/{target}/tasks", json=body)).status_code == 201
    assert await gauge() is None
    assert (await snapshot(runtime, client, target)).status_code == 201
    assert (await snapshot(runtime, client, target)).status_code == 201  # version 2
    assert await gauge() == 1  # once per dataset, not per version


async def test_appraisal_reads_the_run_a_harvest_recorded(runtime: Runtime) -> None:
    """The appraisal read model, as the composition root wires it, follows HarvestedRun's
    typed ``run`` (it reads counters and serves from it)."""
    data = run_event("r-7", "urn:in", serves=["goal:g1"], counters={"stepNulls": 1})
    await harvest(runtime, "t1", data, "k7")
    [appraisal] = [p for p in read_models() if p.name == "appraisal"]
    runner = ProjectionRunner(runtime.store, runtime.pool, appraisal)
    await runner.start()
    await runner.catch_up()
    row = await runtime.pool.fetchrow("SELECT * FROM rm_appraisal.runs")
    assert row is not None
    assert tuple(row.values())[:3] == ("t1", "r-7", "Office/Coach")
    assert json.loads(row["serves"]) == ["goal:g1"]
