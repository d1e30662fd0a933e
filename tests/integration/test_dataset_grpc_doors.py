"""The gRPC door keeps the HTTP door's promises (SPEC C22): the ``authorization`` entry is
taken once, bytes that are no request are answered without a failure of ours in the log, and
an error never sends back an id of unbounded length. Over a real channel to the real server."""

import logging

import grpc
import pytest

from contracts.learning_pb2 import GetDatasetSnapshotRequest
from contracts.learning_pb2_grpc import LearningStub
from services.datasets.grpc import SERVICE
from services.processes.bootstrap import Runtime
from tests.conftest import Keys
from tests.integration.test_dataset_grpc import bearer, free_port

REQUEST = GetDatasetSnapshotRequest(dataset_id="agent:Office/Coach", version=1)


async def started(runtime: Runtime) -> str:
    port = await runtime.start_grpc(free_port())
    assert port is not None
    return f"127.0.0.1:{port}"


async def refusal(call: object) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await call  # type: ignore[misc]
    return refused.value


async def test_two_authorization_entries_are_refused_whichever_comes_first(
    runtime: Runtime, keys: Keys
) -> None:
    """Which of two keys counted was the library's accident (the last): tenant B's key
    placed first was read as tenant A's request."""
    async with grpc.aio.insecure_channel(await started(runtime)) as channel:
        learning = LearningStub(channel)
        for first, second in ((keys.b, keys.a), (keys.a, keys.b), (keys.a, keys.a)):
            metadata = (*bearer(first), *bearer(second))
            refused = await refusal(learning.GetDatasetSnapshot(REQUEST, metadata=metadata))
            assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT, refused.details()
            assert "more than once" in (refused.details() or "")
        one = await refusal(learning.GetDatasetSnapshot(REQUEST, metadata=bearer(keys.a)))
        assert one.code() == grpc.StatusCode.NOT_FOUND  # one entry: read as before


async def test_bytes_that_are_no_request_are_answered_without_a_traceback(
    runtime: Runtime, keys: Keys, caplog: pytest.LogCaptureFixture
) -> None:
    """grpc read the bytes before the method ran: garbage from anyone, key or no key, was
    logged as a failure with its traceback."""
    caplog.set_level(logging.DEBUG)
    garbage = [b"\xff\xff\xff\xff", b"\x0a\x05\xff\xfe\xfd\xfc\xfb", b"\x12" * 64]
    async with grpc.aio.insecure_channel(await started(runtime)) as channel:
        raw = channel.unary_unary(f"/{SERVICE}/GetDatasetSnapshot")
        for sent in garbage:
            stranger = await refusal(raw(sent))
            assert stranger.code() == grpc.StatusCode.UNAUTHENTICATED, stranger.details()
            known = await refusal(raw(sent, metadata=bearer(keys.a)))
            assert known.code() == grpc.StatusCode.INVALID_ARGUMENT, known.details()
    tracebacks = [record for record in caplog.records if record.exc_info]
    assert not tracebacks, [record.getMessage() for record in tracebacks]


async def test_an_error_echoes_at_most_a_bounded_part_of_an_id(
    runtime: Runtime, keys: Keys
) -> None:
    """A multi-megabyte dataset id came back whole in the NOT_FOUND message."""
    huge = GetDatasetSnapshotRequest(dataset_id="x" * 3_000_000, version=1)
    async with grpc.aio.insecure_channel(await started(runtime)) as channel:
        learning = LearningStub(channel)
        refused = await refusal(learning.GetDatasetSnapshot(huge, metadata=bearer(keys.a)))
        assert refused.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT)
        assert len(refused.details() or "") < 300  # a DatasetId is at most 200 characters
