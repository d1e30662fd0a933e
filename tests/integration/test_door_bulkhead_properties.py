"""The bulkhead over HTTP, as a property: whatever one tenant sends through the event door and
the charter — every neighbour event type and the charter, values drawn across their types'
full ranges and past them (``extreme_values``) — the service answers no 5xx, parks nothing,
stays ready, and a second tenant still writes, reads its write through ``minPosition`` and
gets its learning proposals raised by the same generator run (SPEC C42, C43)."""

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.learning.domain import LearningProposal
from services.processes.bootstrap import Runtime
from tests.conftest import Keys, client_for
from tests.integration.door_checks import CE, nothing_parked, put_charter
from tests.integration.extreme_values import body, charters, events
from tests.integration.test_learning import NOW, ORDER, generator

EVALUATION = "factory.quality.v1.EvaluationCompleted"


@pytest.fixture
async def live(runtime: Runtime) -> Runtime:
    """One runtime for every example of a test: its read models running."""
    runtime.start_projections()
    return runtime


@pytest.fixture
async def other(runtime: Runtime, keys: Keys) -> AsyncIterator[httpx.AsyncClient]:
    """The second tenant (B), on the same instance."""
    async with client_for(runtime, keys.b) as http:
        yield http


def failed_evaluation(target: str) -> bytes:
    n = uuid.uuid4().hex[:12]
    return body(
        {
            "specversion": "1.0",
            "id": f"ce-{n}",
            "source": "urn:quality",
            "type": EVALUATION,
            "data": {
                "evaluationId": f"ev-{n}",
                "targetAssetId": target,
                "passed": False,
                "gates": [{"name": "g", "passed": False, "metric": "m", "value": 0.5,
                           "threshold": 0.8}],
                "completedAt": NOW.isoformat(),
            },
        }
    )  # fmt: skip


async def the_other_tenant_is_served(
    runtime: Runtime, client: httpx.AsyncClient, other: httpx.AsyncClient, keys: Keys
) -> None:
    """No 5xx, nothing parked, ready; B's write is read back through ``minPosition``, and the
    generator run raises B's proposal on a target that has just got its third evidence."""
    await nothing_parked(runtime, client)
    written = await other.post(
        "/factory/feedback",
        json={"projectId": "p", "subjectKind": "run", "subjectRef": "r-b", "kind": "escalation"},
    )
    assert written.status_code == 201, written.text
    read = await other.get("/factory/feedback", params={"minPosition": written.json()["position"]})
    assert read.status_code == 200, read.text
    target = f"agent-b-{uuid.uuid4().hex[:8]}"
    for _ in range(3):
        answer = await other.post("/factory/events", content=failed_evaluation(target), headers=CE)
        assert answer.status_code == 201, answer.text
    report = await generator(runtime).run(ORDER)
    raised: list[LearningProposal] = [runtime.store.repository.get(p) for p in report.raised]
    tenant_b = tenant_of_b(keys)
    assert any(p.target_asset_id == target and p.tenant_id == tenant_b for p in raised), report
    await nothing_parked(runtime, client)


def tenant_of_b(keys: Keys) -> str:
    return str(json.loads(keys.entries)[1]["tenant"])


PROPERTY = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@PROPERTY
@given(sample=st.one_of(events(), charters()))
async def test_whatever_one_tenant_sends_the_other_is_served_and_nothing_parks(
    live: Runtime,
    client: httpx.AsyncClient,
    other: httpx.AsyncClient,
    keys: Keys,
    sample: Any,
) -> None:
    """SPEC C24, C25, C39–C41, M07–M16: each draw is refused naming the field (4xx) or
    applied; either way the instance and the other tenant go on."""
    if isinstance(sample, str):
        answer = await put_charter(client, sample)
    else:
        _topic, event, raw_nul = sample
        answer = await client.post("/factory/events", content=body(event, raw_nul), headers=CE)
    assert answer.status_code < 500, answer.text
    if answer.status_code == 422:  # a refusal names what it refuses
        assert answer.json()["field"], answer.text
    await the_other_tenant_is_served(live, client, other, keys)
