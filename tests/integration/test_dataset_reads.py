"""A dataset's tasks and its consent and share state, as the API answers them from the
datasets read model (SPEC C14, C16, C17; decisions D89): paged, in the caller's tenant only,
and the same after a rebuild."""

import httpx

from projections.datasets import Datasets, dataset_sharing
from services.datasets.ids import dataset_key
from services.processes.bootstrap import Runtime
from services.projecting.rebuild import rebuild
from tests.conftest import Keys
from tests.integration.test_datasets import (
    BASE,
    artifact,
    harvest,
    run_event,
    settled,
    snapshot,
    tenant_of,
)

DATASET = "agent:Office/Coach"


async def test_the_consents_and_shares_of_a_dataset_are_read_in_its_tenant_only(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    runtime.start_projections(["datasets"])
    tenant, to_tenant = tenant_of(keys, 0), tenant_of(keys, 1)
    question, answer = await artifact(client, "q"), await artifact(client, "a")
    await harvest(runtime, tenant, run_event("r-1", question, outputRef=answer), "1")
    assert (await snapshot(runtime, client, DATASET)).status_code == 201
    sharing = f"{BASE}/{DATASET}/sharing"
    before = await client.get(sharing)
    assert before.json() == {"consents": [], "shares": []}

    consent = await client.post(f"{BASE}/{DATASET}/consents", json={"toTenant": to_tenant})
    assert consent.status_code == 201, consent.text
    shared = await client.post(f"{BASE}/{DATASET}/versions/1/shares", json={"toTenant": to_tenant})
    assert shared.status_code == 201, shared.text
    await settled(runtime)
    answer_now = (await client.get(sharing)).json()
    [consented] = answer_now["consents"]
    [made] = answer_now["shares"]
    assert (consented["toTenant"], made["toTenant"], made["version"]) == (to_tenant,) * 2 + (1,)
    assert consented["by"] == made["by"] != ""

    # The other tenant: the same dataset id names nothing of ours (C16).
    other = {"Authorization": f"Bearer {keys.b}"}
    assert (await client.get(sharing, headers=other)).json() == {"consents": [], "shares": []}

    # Rebuilt from the log, the read model answers the same (decisions D21).
    await rebuild(runtime.store, runtime.pool, Datasets())
    key = dataset_key(tenant, DATASET)
    rebuilt = await dataset_sharing(runtime.pool, tenant, key)
    assert rebuilt == answer_now


async def test_a_datasets_tasks_are_paged_by_task_id_in_the_callers_tenant(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    runtime.start_projections(["datasets"])
    tenant = tenant_of(keys, 0)
    for n in (1, 2, 3):
        question, answer = await artifact(client, f"q{n}"), await artifact(client, f"a{n}")
        await harvest(runtime, tenant, run_event(f"r-{n}", question, outputRef=answer), str(n))
    await settled(runtime)
    tasks = f"{BASE}/{DATASET}/tasks"
    first = (await client.get(tasks, params={"limit": 2})).json()
    assert [t["taskId"] for t in first["items"]] == ["run:r-1", "run:r-2"]
    assert first["items"][0]["provenance"]["runId"] == "r-1"
    rest = (await client.get(tasks, params={"limit": 2, "before": first["next"]})).json()
    assert ([t["taskId"] for t in rest["items"]], rest["next"]) == (["run:r-3"], None)

    other = {"Authorization": f"Bearer {keys.b}"}
    assert (await client.get(tasks, headers=other)).json() == {"items": [], "next": None}
    # A cursor given to one tenant is no cursor for another.
    forged = await client.get(tasks, params={"before": first["next"]}, headers=other)
    assert forged.status_code == 422, forged.text
