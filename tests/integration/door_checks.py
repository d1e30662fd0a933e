"""What every door test of bad input checks afterwards: every read model caught up with the
log, nothing parked, ``/readyz`` 200 (the bulkhead: one tenant's input harms nobody else)."""

import asyncio
import json
from typing import Any

import httpx

from services.followers.parked import list_parked
from services.followers.waiting import wait_for_position
from services.processes.bootstrap import Runtime
from services.processes.contexts import read_models

CE = {"Content-Type": "application/cloudevents+json"}
TOML = {"Content-Type": "application/toml"}


def cloudevent(kind: str, data: dict[str, Any], event_id: str = "e-1", **attributes: Any) -> Any:
    return {
        "specversion": "1.0",
        "id": event_id,
        "source": "urn:neighbour",
        "type": kind,
        "data": data,
        **attributes,
    }


async def post_event(client: httpx.AsyncClient, event: Any, **headers: str) -> httpx.Response:
    body = event if isinstance(event, bytes) else json.dumps(event).encode()
    return await client.post("/factory/events", content=body, headers={**CE, **headers})


async def put_charter(client: httpx.AsyncClient, document: str | bytes) -> httpx.Response:
    body = document if isinstance(document, bytes) else document.encode()
    return await client.put("/factory/appraisal/charter", content=body, headers=TOML)


async def read_models_caught_up(runtime: Runtime, timeout: float = 30) -> None:
    """Every read model has read the whole log (applied or parked each event)."""
    head = await asyncio.to_thread(runtime.store.recorder.max_notification_id) or 0
    for projection in read_models():
        reader = f"rm_{projection.name}"
        reached = await wait_for_position(runtime.pool, reader, head, timeout)
        assert reached >= head, f"{reader} stopped at {reached} of {head}"


async def nothing_parked(runtime: Runtime, client: httpx.AsyncClient) -> None:
    """No reader parked anything, and the instance is ready."""
    await read_models_caught_up(runtime)
    parked = await list_parked(runtime.pool)
    assert parked == [], [(p.reader, p.topic, p.error[:200]) for p in parked]
    await ready(client)


async def ready(client: httpx.AsyncClient, timeout: float = 30) -> None:
    """``/readyz`` answers 200; a reader that has not started yet (state ``new``, just after
    ``start_projections``) is waited for, any other problem fails at once."""
    async with asyncio.timeout(timeout):
        while (answer := await client.get("/readyz")).status_code != 200:
            starting = all(
                reader["state"] == "new" or not reader["problems"]
                for reader in answer.json()["readers"]
            )
            assert starting, answer.text
            await asyncio.sleep(0.05)
