"""Datasets end to end: a neighbour on plain aiokafka sends RunCompleted
CloudEvents to the real broker; the running service harvests them (SPEC C24), publishes a
snapshot read back byte for byte (C15, C18), DatasetPublished reaches its topic (C23), gRPC
resolves the version (C22) and the datasets gauge counts it (C50). A malformed RunCompleted
goes to the dead-letter topic and the partition keeps flowing."""

import asyncio
import json
from typing import Any

import grpc
import httpx
import pytest

from contracts.learning_pb2 import GetDatasetSnapshotRequest
from contracts.learning_pb2_grpc import LearningStub
from tests.conftest import Keys
from tests.e2e.conftest import Service, auth, free_port
from tests.kafka_peer import consume, produce

BASE = "/factory/evaluation/datasets"
DATASET = "agent:Office/Agent/Coach"
GRPC_PORT = free_port()


@pytest.fixture
def service_env() -> dict[str, str]:
    return {"FEEDBACKLOOP_GRPC_PORT": str(GRPC_PORT)}


def run_completed(tenant: str, run_id: str, data: dict[str, Any]) -> bytes:
    return json.dumps(
        {
            "specversion": "1.0",
            "id": f"completed-{run_id}",
            "source": "urn:run-control",
            "type": "factory.runs.v1.RunCompleted",
            "tenantid": tenant,
            "datacontenttype": "application/json",
            "data": {
                "runId": run_id,
                "agentId": "Office/Agent/Coach",
                "outcome": "succeeded",
                "completedAt": "2026-11-30T08:00:00Z",
                "counters": {"loopStops": 0},
                **data,
            },
        }
    ).encode()


async def candidates(http: httpx.AsyncClient, key: str, count: int) -> None:
    """Wait until the dataset would hold ``count`` tasks: how a person would wait."""
    async with asyncio.timeout(60):
        while True:
            listed = (await http.get(BASE, headers=auth(key))).json()["items"]
            if [d["candidates"] for d in listed if d["datasetId"] == DATASET] == [count]:
                return
            await asyncio.sleep(0.2)


async def test_runs_from_kafka_become_a_snapshot_read_back_byte_identical(
    service: Service, http: httpx.AsyncClient, keys: Keys, kafka_bootstrap: str
) -> None:
    tenant = json.loads(keys.entries)[0]["tenant"]
    refs = []
    for text in ("How many hours?", "Eight.", "What rate?", "120 EUR."):
        stored = await http.post("/factory/artifacts", content=text.encode(), headers=auth(keys.a))
        assert stored.status_code == 201, stored.text
        refs.append(stored.json()["ref"])
    topic = service.prefix + "factory.runs.v1.run-completed"
    first = run_completed(tenant, "run-1", {"inputRef": refs[0], "outputRef": refs[1]})
    malformed = run_completed(tenant, "run-x", {"inputRef": refs[0]}).replace(b'"runId"', b'"id"')
    second = run_completed(tenant, "run-2", {"inputRef": refs[2], "outputRef": refs[3]})
    # One partition (one key): the malformed message sits between two good ones; the first
    # is sent twice, as a neighbour's retry would.
    await produce(kafka_bootstrap, topic, [first, malformed, second, first], key=b"coach")
    await candidates(http, keys.a, 2)

    dead = await consume(kafka_bootstrap, topic + ".dlt", 1)
    assert len(dead) == 1
    headers = dict(dead[0].headers)
    assert headers["dlt-field"] in (b"run_id", b"runId")
    assert headers["dlt-original-offset"] == b"1"

    published = await http.post(f"{BASE}/{DATASET}/snapshot", headers=auth(keys.a))
    assert published.status_code == 201, published.text
    assert (published.json()["version"], published.json()["taskCount"]) == (1, 2)
    old = await http.get(f"{BASE}/{DATASET}/versions/1", headers=auth(keys.a))
    assert old.status_code == 200
    assert [t["taskId"] for t in json.loads(old.content)["tasks"]] == ["run:run-1", "run:run-2"]

    # DatasetPublished reaches its topic, read by a plain consumer.
    [message] = await consume(
        kafka_bootstrap, service.prefix + "evaluation.datasets.v1.dataset-published", 1
    )
    event = json.loads(message.value)
    assert event["type"] == "evaluation.datasets.v1.DatasetPublished"
    assert event["data"]["datasetId"] == DATASET
    assert message.key == event["data"]["datasetKey"].encode() == event["subject"].encode()
    assert (event["data"]["version"], event["data"]["taskCount"]) == (1, 2)
    assert event["data"]["tenantId"] == tenant
    assert event["data"]["snapshotRef"] == published.json()["snapshotRef"]

    # More runs, a second version; the first reads the same bytes.
    third = run_completed(tenant, "run-3", {"inputRef": refs[0], "outputRef": refs[3]})
    await produce(kafka_bootstrap, topic, [third], key=b"coach")
    await candidates(http, keys.a, 3)
    again = await http.post(f"{BASE}/{DATASET}/snapshot", headers=auth(keys.a))
    assert (again.status_code, again.json()["version"]) == (201, 2)
    reread = await http.get(f"{BASE}/{DATASET}/versions/1", headers=auth(keys.a))
    assert reread.content == old.content

    # A suite resolves the pinned version over gRPC, in the same process.
    async with grpc.aio.insecure_channel(f"127.0.0.1:{GRPC_PORT}") as channel:
        found = await LearningStub(channel).GetDatasetSnapshot(
            GetDatasetSnapshotRequest(dataset_id=DATASET, version=1, include_content=True),
            metadata=(("authorization", f"Bearer {keys.a}"),),
        )
    assert found.content == old.content
    assert found.snapshot_ref == published.json()["snapshotRef"]

    # SPEC C50: the dataset counts, by target (tenant ids only where configured).
    # (read from the read model at the metrics' refresh; the target is the tenant's own id,
    # so it is no label value on the unauthenticated port)
    gauge = 'connectsoft_factory_learning_datasets{target="",tenant=""} 1.0'
    async with asyncio.timeout(60):
        while gauge not in (metrics := (await http.get(service.metrics_url)).text):
            await asyncio.sleep(0.5)
    assert "Office/Agent/Coach" not in metrics
