"""Consent from the memory service (SPEC C17, C53; decisions D56): a tenant with a
MemoryPromotionService configured shares a dataset only on its consent; the service down is a
503 with the reason and nothing shared, the service refusing a 403; a consent recorded locally
counts only where no service is configured. The service is a real local HTTP server."""

import contextlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from services.datasets.consent import URL, URLS
from services.processes.bootstrap import Runtime
from tests.conftest import Keys, event_count
from tests.consent_service import consent_service
from tests.integration.test_datasets import (
    BASE,
    artifact,
    harvest,
    run_event,
    snapshot,
    tenant_of,
)

DATASET = "agent:Office/Coach"
SHARE = f"{BASE}/{DATASET}/versions/1/shares"


async def published(runtime: Runtime, client: httpx.AsyncClient, keys: Keys) -> str:
    """Version 1 of the dataset, one task; answers the question's artifact ref."""
    runtime.start_projections(["datasets"])
    question, answer = await artifact(client, "q"), await artifact(client, "a")
    await harvest(runtime, tenant_of(keys, 0), run_event("r-1", question, outputRef=answer), "1")
    assert (await snapshot(runtime, client, DATASET)).status_code == 201
    return question


async def nothing_shared(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys, question: str, before: int
) -> None:
    assert await event_count(runtime) == before
    other = {"Authorization": f"Bearer {keys.b}"}
    assert (await client.get(f"/factory/artifacts/{question}", headers=other)).status_code == 404
    assert (await client.get(BASE, headers=other)).json()["items"] == []


@contextlib.contextmanager
def down() -> Iterator[str]:
    """A URL where nothing listens: a server started and stopped."""
    with consent_service(lambda q: (200, {"granted": True})) as (url, _):
        pass
    yield url


async def test_the_consent_service_down_refuses_the_share_with_503_and_shares_nothing(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """C53: MemoryPromotionService degrades: the share is refused with the reason, even with
    a consent recorded locally (it is not read where a service is configured)."""
    question = await published(runtime, client, keys)
    to_tenant = tenant_of(keys, 1)
    recorded = await client.post(f"{BASE}/{DATASET}/consents", json={"toTenant": to_tenant})
    assert recorded.status_code == 201
    with down() as url:
        monkeypatch.setenv(URL, url)
        before = await event_count(runtime)
        refused = await client.post(SHARE, json={"toTenant": to_tenant})
    assert refused.status_code == 503, refused.text
    body = refused.json()
    assert (body["error"], body["reason"]) == (
        "consent-service-unavailable",
        "consent-service-unavailable",
    )
    assert body["cause"]  # why: the connection that failed
    assert refused.headers["Retry-After"]
    await nothing_shared(runtime, client, keys, question, before)


@pytest.mark.parametrize("status", [500, 404])
async def test_a_consent_service_answering_something_else_is_unavailable(
    runtime: Runtime,
    client: httpx.AsyncClient,
    keys: Keys,
    monkeypatch: pytest.MonkeyPatch,
    status: int,
) -> None:
    question = await published(runtime, client, keys)
    with consent_service(lambda q: (status, {"oops": True})) as (url, asked):
        monkeypatch.setenv(URL, url)
        before = await event_count(runtime)
        refused = await client.post(SHARE, json={"toTenant": tenant_of(keys, 1)})
    assert refused.status_code == 503, refused.text
    assert str(status) in refused.json()["cause"]
    assert len(asked) == 1
    await nothing_shared(runtime, client, keys, question, before)


async def test_the_consent_service_refusing_is_a_403_with_its_reason(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys, monkeypatch: pytest.MonkeyPatch
) -> None:
    question = await published(runtime, client, keys)
    to_tenant = tenant_of(keys, 1)
    await client.post(f"{BASE}/{DATASET}/consents", json={"toTenant": to_tenant})

    def refuse(q: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return 200, {"granted": False, "reason": "no data-sharing agreement"}

    with consent_service(refuse) as (url, asked):
        monkeypatch.setenv(URLS, f'{{"{tenant_of(keys, 0)}": "{url}"}}')  # per tenant
        before = await event_count(runtime)
        refused = await client.post(SHARE, json={"toTenant": to_tenant})
    assert refused.status_code == 403, refused.text
    assert refused.json()["reason"] == "consent-refused"
    assert refused.json()["cause"] == "no data-sharing agreement"
    assert asked == [
        {"tenantId": tenant_of(keys, 0), "datasetId": DATASET, "version": 1,
         "toTenant": to_tenant, "scope": "dataset-share", "anonymised": True},
    ]  # fmt: skip
    await nothing_shared(runtime, client, keys, question, before)


async def test_the_consent_service_granting_shares_without_a_local_consent(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys, monkeypatch: pytest.MonkeyPatch
) -> None:
    await published(runtime, client, keys)
    to_tenant = tenant_of(keys, 1)
    with consent_service(lambda q: (200, {"granted": True})) as (url, asked):
        monkeypatch.setenv(URL, url)
        shared = await client.post(SHARE, json={"toTenant": to_tenant})
        assert shared.status_code == 201, shared.text
        assert shared.json()["classification"] == "anonymised"
        again = await client.post(SHARE, json={"toTenant": to_tenant})
        assert again.status_code == 200  # the same share: nothing new
    assert len(asked) == 2
    other = {"Authorization": f"Bearer {keys.b}"}
    listed = (await client.get(BASE, headers=other)).json()["items"]
    assert [d["classification"] for d in listed] == ["anonymised"]


async def test_without_a_service_the_local_consent_is_what_counts(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another tenant's service configured is not this tenant's: the local rule holds."""
    await published(runtime, client, keys)
    to_tenant = tenant_of(keys, 1)
    with consent_service(lambda q: (200, {"granted": True})) as (url, asked):
        monkeypatch.delenv(URL, raising=False)
        monkeypatch.setenv(URLS, f'{{"{to_tenant}": "{url}"}}')
        refused = await client.post(SHARE, json={"toTenant": to_tenant})
        assert (refused.status_code, refused.json()["reason"]) == (403, "consent-required")
        await client.post(f"{BASE}/{DATASET}/consents", json={"toTenant": to_tenant})
        shared = await client.post(SHARE, json={"toTenant": to_tenant})
        assert shared.status_code == 201, shared.text
    assert asked == []
