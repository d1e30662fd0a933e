"""Metrics on the unauthenticated port: the counts of things that stand are the read models'
counts, whichever process changed them, and no label value is a tenant's own (its id, a
dataset id, an agent id) unless the operator asked for tenant labels (SPEC C49, C50)."""

import asyncio
import os
import subprocess
import sys
import uuid

import httpx
from prometheus_client import REGISTRY

from projections.learning_proposals import count_proposals
from services.processes.bootstrap import Runtime
from services.processes.metrics_port import serve_metrics
from services.processes.read_model_gauges import refresh
from tests.conftest import Keys, maintain
from tests.integration.test_datasets import BASE, artifact, snapshot, tenant_of
from tests.integration.test_leaks import free_port
from tests.integration.test_learning import AGENT, DAY, failed_evaluation, neighbour, visible
from tests.standin import ROOT

PROPOSALS = "connectsoft_factory_learning_proposals"


def proposals_gauge() -> dict[str, float]:
    """Every series of the proposals gauge, by state (tenant labels are off)."""
    return {
        sample.labels["state"]: sample.value
        for family in REGISTRY.collect()
        if family.name == PROPOSALS
        for sample in family.samples
    }


async def one_shot_scheduler(runtime: Runtime, keys: Keys, order: str) -> None:
    """``feedbackloop scheduler --order …`` as a process of its own, as an operator runs it."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("KAFKA")},
        "DATABASE_URL": runtime.database_url,
        "FEEDBACKLOOP_API_KEYS": keys.entries,
        "FEEDBACKLOOP_METRICS_PORT": "0",
    }
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "services.processes.cli", "scheduler", "--order", order],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


async def test_proposals_raised_by_a_one_shot_scheduler_and_decided_here_count_as_the_read_model(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """C49: the generator ran in another process; this one picked the proposal up and
    accepted it. Moved per process, this process's Proposed series went to -1; read from the
    read model, it is the read model's count and never negative."""
    runtime.start_projections()  # the read models, as `serve` runs them
    tenant = tenant_of(keys, 0)
    for n in range(3):
        await neighbour(runtime, tenant, failed_evaluation(n), f"ce-{n}")
    await one_shot_scheduler(runtime, keys, f"proposals/{DAY.isoformat()}")
    await visible(runtime)
    [proposal] = (await client.get("/factory/learning/proposals")).json()["items"]
    base = f"/factory/learning/proposals/{proposal['proposalId']}"
    await maintain(client, keys.a, agent=AGENT)  # alice decides as its maintainer (D77)
    assert (await client.post(f"{base}/pick-up")).status_code == 200
    decided = await client.post(f"{base}/decide", json={"decision": "accept"})
    assert decided.json()["state"] == "InReview"  # approved; Accepted with its release (D54)
    released = await client.post(f"{base}/release", json={"releaseId": "rel-1"})
    assert released.json()["state"] == "Accepted"
    await visible(runtime)

    await refresh(runtime.pool)

    assert proposals_gauge() == {"Accepted": 1.0}
    assert await count_proposals(runtime.pool) == [(tenant, "prompt-improvement", "Accepted", 1)]
    assert all(value >= 0 for value in proposals_gauge().values())


async def test_the_metrics_port_shows_no_tenant_dataset_or_agent_id(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """C50 by target, without the target: a dataset whose id names the tenant's agent is
    counted, and neither id (nor the tenant's, nor a proposal's target) is on the port."""
    runtime.start_projections()
    runtime.settings.metrics_port = free_port()
    # served as a process serves them: with the read-model gauges refreshed there
    port = runtime.metrics_served(serve_metrics(runtime.settings, runtime.role))
    tenant = tenant_of(keys, 0)
    agent = f"Office/Agent/{uuid.uuid4().hex[:8]}"
    dataset = f"agent:{agent}"
    question, answer = await artifact(client, "q"), await artifact(client, "a")
    task = {"taskId": "t-1", "inputRef": question, "expectedRef": answer}
    assert (await client.post(f"{BASE}/{dataset}/tasks", json=task)).status_code == 201
    assert (await snapshot(runtime, client, dataset)).status_code == 201
    for n in range(3):
        await neighbour(runtime, tenant, failed_evaluation(n, target=agent), f"ce-{n}")
    await one_shot_scheduler(runtime, keys, f"proposals/{DAY.isoformat()}")
    await visible(runtime)
    await refresh(runtime.pool)

    async with httpx.AsyncClient() as scraper:
        scraped = (await scraper.get(f"http://127.0.0.1:{port}/metrics")).text
    assert 'connectsoft_factory_learning_datasets{target="",tenant=""} 1.0' in scraped
    assert (
        'connectsoft_factory_learning_proposals{kind="prompt-improvement",state="Proposed",'
        'tenant=""} 1.0'
    ) in scraped
    for owned in (tenant, agent, dataset, agent.replace("/", "_")):
        assert owned not in scraped, owned
