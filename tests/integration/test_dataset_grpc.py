"""gRPC ``Learning.GetDatasetSnapshot`` (SPEC C22) called with the generated client: a version
resolves to its snapshot artifact, with the API's keys and scopes and within the tenant."""

import socket

import grpc
import httpx
import pytest

from contracts.learning_pb2 import GetDatasetSnapshotRequest
from contracts.learning_pb2_grpc import LearningStub
from services.processes.bootstrap import Runtime
from tests.conftest import Keys
from tests.integration.test_datasets import (
    BASE,
    artifact,
    harvest,
    run_event,
    snapshot,
    tenant_of,
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def bearer(key: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {key}"),)


async def test_a_version_resolves_to_its_snapshot_for_its_own_tenant_only(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    runtime.start_projections(["datasets"])
    question, answer = await artifact(client, "q"), await artifact(client, "a")
    await harvest(runtime, tenant_of(keys, 0), run_event("r-1", question, outputRef=answer), "1")
    published = await snapshot(runtime, client, "agent:Office/Coach")
    assert published.status_code == 201, published.text
    content = (await client.get(f"{BASE}/agent:Office/Coach/versions/1")).content
    port = await runtime.start_grpc(free_port())
    assert port is not None
    request = GetDatasetSnapshotRequest(dataset_id="agent:Office/Coach", version=1)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        learning = LearningStub(channel)
        found = await learning.GetDatasetSnapshot(request, metadata=bearer(keys.a))
        assert found.snapshot_ref == published.json()["snapshotRef"]
        assert found.snapshot_ref == f"artifact:sha256:{found.sha256}"
        assert (found.version, found.task_count) == (1, 1)
        assert found.classification == "tenant-confidential"
        assert found.content == b""  # only when asked for
        whole = GetDatasetSnapshotRequest(
            dataset_id="agent:Office/Coach", version=1, include_content=True
        )
        with_content = await learning.GetDatasetSnapshot(whole, metadata=bearer(keys.a))
        assert with_content.content == content  # the same bytes as over HTTP

        refusals = [
            (request, bearer(keys.b), grpc.StatusCode.NOT_FOUND),  # another tenant's key
            (request, (), grpc.StatusCode.UNAUTHENTICATED),  # no key
            (request, bearer("fl_not-a-key"), grpc.StatusCode.UNAUTHENTICATED),
            (request, bearer(keys.a_read_only), grpc.StatusCode.PERMISSION_DENIED),
            (
                GetDatasetSnapshotRequest(dataset_id="agent:Office/Coach", version=2),
                bearer(keys.a),
                grpc.StatusCode.NOT_FOUND,  # an unknown version
            ),
            (
                GetDatasetSnapshotRequest(dataset_id="", version=1),
                bearer(keys.a),
                grpc.StatusCode.INVALID_ARGUMENT,
            ),
        ]
        for asked, metadata, status in refusals:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await learning.GetDatasetSnapshot(asked, metadata=metadata)
            assert refused.value.code() == status, (asked, metadata)
