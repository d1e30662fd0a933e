"""The other doors a bearer token opens besides the HTTP routes: the gRPC door, and the
operator's ``feedbackloop tokens`` commands (decisions D32–D34), against a real OpenID
Connect issuer (tests/oidc_tokens.py)."""

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import pytest
from grpc import StatusCode
from typer.testing import CliRunner

from contracts.learning_pb2 import GetDatasetSnapshotRequest
from contracts.learning_pb2_grpc import LearningStub
from services.processes import cli
from services.processes.bootstrap import Runtime
from tests.conftest import Keys
from tests.oidc_tokens import (
    ATTACKS,
    AUDIENCE,
    SCOPES,
    TENANT_A,
    oidc_issuer,
    runtime_with,
    started_issuer,
    trusted,
)


@pytest.fixture(scope="module")
def issuer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[oidc_issuer.Issuer]:
    yield from started_issuer(tmp_path_factory)


@pytest.fixture
async def runtime(
    database_url: str, keys: Keys, issuer: oidc_issuer.Issuer
) -> AsyncIterator[Runtime]:
    rt = await runtime_with(database_url, keys, issuer)
    yield rt
    await rt.close()


async def test_the_grpc_door_takes_the_same_tokens(
    runtime: Runtime, issuer: oidc_issuer.Issuer
) -> None:
    port = await runtime.start_grpc(oidc_issuer._free_port())
    assert port is not None
    request = GetDatasetSnapshotRequest(dataset_id="agent:Office/Coach", version=1)
    cases = [
        # Known and holding the scope: it gets as far as the (absent) dataset of its tenant.
        (issuer.token("svc-eval", "secret-e", "factory.evaluation.read"), StatusCode.NOT_FOUND),
        (issuer.token("svc-reader", "secret-r", "factory.feedback.read"),
         StatusCode.PERMISSION_DENIED),
        (ATTACKS["expired"](issuer), StatusCode.UNAUTHENTICATED),
    ]  # fmt: skip
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        learning = LearningStub(channel)
        for token, status in cases:
            metadata = (("authorization", f"Bearer {token}"),)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await learning.GetDatasetSnapshot(request, metadata=metadata)
            assert refused.value.code() == status


# ------------------------------------------------------------------ the operator's commands


def run_cli(issuer: oidc_issuer.Issuer, args: list[str], given: str = "") -> Any:
    env = {"FEEDBACKLOOP_OAUTH_ISSUERS": json.dumps([trusted(issuer)])}
    return CliRunner().invoke(cli.app, ["tokens", *args], input=given, env=env)


def test_tokens_issuers_lists_the_keys_each_issuer_publishes(issuer: oidc_issuer.Issuer) -> None:
    listed = run_cli(issuer, ["issuers"])
    assert listed.exit_code == 0, listed.output
    assert f"{issuer.url}: audience {AUDIENCE}, keys {issuer.kid}" in listed.output


def test_tokens_check_shows_the_principal_or_the_reason(issuer: oidc_issuer.Issuer) -> None:
    accepted = run_cli(issuer, ["check"], issuer.token("svc-a", "secret-a", SCOPES))
    assert accepted.exit_code == 0, accepted.output
    shown = json.loads(accepted.stdout)
    assert (shown["tenant"], shown["subject"], shown["service"]) == (TENANT_A, "svc-a", True)
    assert shown["roles"] == ["Observer", "Reviewer"]
    refused = run_cli(issuer, ["check"], ATTACKS["expired"](issuer))
    assert refused.exit_code == 1
    assert "refused: expired" in refused.stderr
