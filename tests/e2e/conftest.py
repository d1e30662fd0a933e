"""The service as its own process (``feedbackloop serve``) on a real PostgreSQL and Kafka, and a
webhook receiver standing in for engineering triage."""

import asyncio
import hashlib
import hmac
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from email.message import Message
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Keys
from tests.servers import topics_deleted
from tests.standin import ROOT, free_port, standin_agent
from tests.webhook_endpoint import webhook_endpoint

__all__ = ["ROOT", "free_port"]  # the e2e tests' helpers, found here

WEBHOOK_SECRET = "e2e-webhook-secret"


@dataclass
class Receiver:
    """A local webhook endpoint that answers ``status`` and keeps what it received, with
    whether each signature verified."""

    url: str
    status: int = 200
    received: list[dict[str, Any]] = field(default_factory=list)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    port = free_port()
    state = Receiver(f"http://127.0.0.1:{port}/hand-overs")

    def answer(body: bytes, headers: Message) -> int:
        digest = hmac.new(WEBHOOK_SECRET.encode(), body, hashlib.sha256).hexdigest()
        signature = headers.get("X-Feedbackloop-Signature", "")
        state.received.append(
            {
                "verified": hmac.compare_digest(signature, f"sha256={digest}"),
                "event": json.loads(body),
                "answered": state.status,
            }
        )
        return state.status

    with webhook_endpoint(answer, port):
        yield state


@dataclass
class Service:
    url: str
    prefix: str
    log: Path
    metrics_url: str  # the metrics port's /metrics, apart from the API


@pytest.fixture
def service_env() -> dict[str, str]:
    """More environment for the service; a test module overrides it (e.g. with ``agent_env``)."""
    return {}


@pytest.fixture
def standin(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The stand-in agent as its own process, answering as the test module's ``SCRIPT`` says;
    yields its URL."""
    with standin_agent(request.module.SCRIPT, tmp_path) as url:
        yield url


def agent_env(url: str) -> dict[str, str]:
    """The service's environment for an agent served over HTTP at ``url``."""
    return {"FEEDBACKLOOP_AGENT_URL": url, "FEEDBACKLOOP_AGENT_KIND": "http"}


@pytest.fixture
def service(
    database_url: str,
    kafka_bootstrap: str,
    keys: Keys,
    receiver: Receiver,
    service_env: dict[str, str],
    tmp_path: Path,
) -> Iterator[Service]:
    port, metrics_port, prefix = free_port(), free_port(), f"e2e{uuid.uuid4().hex[:6]}."
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "KAFKA_BOOTSTRAP_SERVERS": kafka_bootstrap,
        "FEEDBACKLOOP_API_KEYS": keys.entries,
        "FEEDBACKLOOP_PORT": str(port),
        "FEEDBACKLOOP_METRICS_PORT": str(metrics_port),
        "FEEDBACKLOOP_TOPIC_PREFIX": prefix,
        "FEEDBACKLOOP_INBOUND_GROUP_ID": f"e2e-{uuid.uuid4().hex[:6]}",
        "FEEDBACKLOOP_HANDOVER_WEBHOOK_URL": receiver.url,
        "FEEDBACKLOOP_HANDOVER_WEBHOOK_SECRET": WEBHOOK_SECRET,
        "FEEDBACKLOOP_HANDOVER_WEBHOOK_MAX_ATTEMPTS": "3",
        "FEEDBACKLOOP_HANDOVER_WEBHOOK_BACKOFF_SECONDS": "0.2",
        **service_env,
    }
    log = tmp_path / "service.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "services.processes.cli", "serve"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, process, log)
        yield Service(url, prefix, log, f"http://127.0.0.1:{metrics_port}/metrics")
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
        topics_deleted(kafka_bootstrap, prefix)


def wait_until_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    for _ in range(600):
        if process.poll() is not None:
            raise RuntimeError(f"the service exited:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"the service did not become healthy:\n{log.read_text()[-3000:]}")


@pytest.fixture
async def http(service: Service) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=service.url, timeout=30) as client:
        yield client


async def listed(
    http: httpx.AsyncClient, route: str, key: str, count: int, **params: Any
) -> list[Any]:
    """GET the list at ``route`` until it shows ``count`` items: how a neighbour would wait
    for a message."""
    async with asyncio.timeout(60):
        while True:
            response = await http.get(route, params=params, headers=auth(key))
            assert response.status_code == 200, response.text
            items: list[Any] = response.json()["items"]
            if len(items) >= count:
                return items
            await asyncio.sleep(0.2)


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}
