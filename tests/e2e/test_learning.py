"""Learning proposals end to end: the service as its own process on a real PostgreSQL and
Kafka, neighbours on plain aiokafka (SPEC C32, C37–C45).

Three failed EvaluationCompleted events for one agent arrive on the broker; the inbound
consumer records them as evidence; the scheduler's ``proposals/<date>`` order raises exactly
one proposal (and a replay of the same events raises none); a maintainer picks it up and
accepts it over HTTP; the registry answers with DraftReleaseOpened. A neighbour reading
``learning-proposal-raised`` and ``learning-proposal-decided`` from offset 0 sees each
change once, in order, with the seed's payload fields: Accepted once, with the release it
became Accepted by (C34, decisions D54).
"""

import asyncio
import json
import os
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx
from eventsourcing.utils import get_topic

from contracts import topics
from services.learning.domain import LearningProposal
from services.learning.evidence import Evidence
from services.store.event_store import EVENTS_TABLE
from tests.conftest import Keys, maintain
from tests.e2e.conftest import ROOT, Service, auth
from tests.kafka_peer import consume, produce, quiet_for

AGENT = "agent-e2e"


def evaluation_completed(tenant: str, n: int, event_id: str) -> bytes:
    at = datetime.now(UTC) - timedelta(minutes=n)
    return json.dumps(
        {
            "specversion": "1.0",
            "id": event_id,
            "source": "urn:quality-scoring",
            "type": "factory.quality.v1.EvaluationCompleted",
            "tenantid": tenant,
            "datacontenttype": "application/json",
            "data": {
                "evaluationId": f"eval-{n}",
                "targetAssetId": AGENT,
                "targetVersion": "1.4.0",
                "passed": False,
                "gates": [{"name": "grounded", "passed": False, "metric": "groundedness",
                           "value": 0.55, "threshold": 0.8}],
                "completedAt": at.isoformat(),
                "someFieldWeDoNotKnow": {"nested": True},
            },
        }
    ).encode()  # fmt: skip


def draft_release_opened(tenant: str, proposal_id: str) -> bytes:
    return json.dumps(
        {
            "specversion": "1.0",
            "id": str(uuid.uuid4()),
            "source": "urn:agent-registry",
            "type": "factory.registry.v1.DraftReleaseOpened",
            "tenantid": tenant,
            "data": {"proposalId": proposal_id, "releaseId": "release-77"},
        }
    ).encode()


async def stored(database_url: str, event: type) -> int:
    conn = await asyncpg.connect(database_url)
    try:
        count = await conn.fetchval(
            f"SELECT count(*) FROM {EVENTS_TABLE} WHERE topic = $1", get_topic(event)
        )
    finally:
        await conn.close()
    return int(count)


async def until(check: Any, timeout: float = 60) -> None:
    async with asyncio.timeout(timeout):
        while not await check():
            await asyncio.sleep(0.2)


async def order_proposals(service: Service, database_url: str, keys: Keys) -> str:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "FEEDBACKLOOP_API_KEYS": keys.entries,
        "FEEDBACKLOOP_METRICS_PORT": "0",
        "FEEDBACKLOOP_TOPIC_PREFIX": service.prefix,
    }
    today = datetime.now(UTC).date().isoformat()
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "services.processes.cli", "scheduler",
         "--order", f"proposals/{today}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


async def test_three_failed_evaluations_raise_one_proposal_which_a_maintainer_accepts(
    service: Service,
    http: httpx.AsyncClient,
    keys: Keys,
    kafka_bootstrap: str,
    database_url: str,
) -> None:
    tenant = str(json.loads(keys.entries)[0]["tenant"])
    inbound = service.prefix + topics.EVALUATION_COMPLETED
    events = [evaluation_completed(tenant, n, f"ce-{n}") for n in range(3)]
    await produce(kafka_bootstrap, inbound, events, key=AGENT.encode())

    async def three_recorded() -> bool:
        return await stored(database_url, Evidence.Recorded) == 3

    await until(three_recorded)
    await order_proposals(service, database_url, keys)
    # The replay: the same CloudEvents again, and the same facts under new CloudEvent ids.
    replay = [evaluation_completed(tenant, n, f"again-{n}") for n in range(3)]
    await produce(kafka_bootstrap, inbound, events + replay, key=AGENT.encode())
    await asyncio.sleep(3)  # give the consumer the replay
    await order_proposals(service, database_url, keys)
    assert await stored(database_url, Evidence.Recorded) == 3
    assert await stored(database_url, LearningProposal.Raised) == 1

    async def listed() -> list[dict[str, Any]]:
        answer = await http.get("/factory/learning/proposals", headers=auth(keys.a))
        assert answer.status_code == 200, answer.text
        items: list[dict[str, Any]] = answer.json()["items"]
        return items

    async def one_listed() -> bool:
        return len(await listed()) == 1

    await until(one_listed)
    [proposal] = await listed()
    proposal_id = proposal["proposalId"]
    assert (proposal["kind"], proposal["targetAssetId"], proposal["state"]) == (
        "prompt-improvement",
        AGENT,
        "Proposed",
    )
    assert sorted(proposal["evidenceRefs"]) == ["evaluation:eval-0", "evaluation:eval-1",
                                                "evaluation:eval-2"]  # fmt: skip
    assert proposal["expectedEffect"] == {
        "metric": "groundedness", "from": 0.55, "to": 0.8, "confidence": 0.75,
    }  # fmt: skip

    base = f"/factory/learning/proposals/{proposal_id}"
    await maintain(http, keys.a, ("alice",), agent=AGENT)  # its maintainer decides (D77)
    picked = await http.post(f"{base}/pick-up", headers=auth(keys.a))
    assert picked.status_code == 200, picked.text
    accepted = await http.post(f"{base}/decide", headers=auth(keys.a), json={"decision": "accept"})
    assert accepted.status_code == 200, accepted.text
    # C34, decisions D54: the maintainer's accept leaves it InReview until the release exists.
    assert (accepted.json()["state"], accepted.json()["reviewedBy"]) == ("InReview", "alice")
    waiting = await http.get(
        base, headers=auth(keys.a), params={"minPosition": accepted.json()["position"]}
    )
    assert waiting.status_code == 200, waiting.text
    assert waiting.json()["waitingForRelease"] is True  # C53: the registry has not answered

    # The registry's Draft release request, and its answer (C32).
    [request] = await consume(kafka_bootstrap, service.prefix + topics.DRAFT_RELEASE_REQUESTED, 1)
    assert json.loads(request.value)["data"]["proposalId"] == proposal_id
    registry = service.prefix + topics.DRAFT_RELEASE_OPENED
    await produce(kafka_bootstrap, registry, [draft_release_opened(tenant, proposal_id)])

    async def released() -> bool:
        view = (await http.get(base, headers=auth(keys.a))).json()
        return bool(view["resultingReleaseId"] == "release-77" and view["state"] == "Accepted")

    await until(released)
    # C49, on the metrics port: the read model's count, though another process (the one-shot
    # scheduler) raised the proposal that this one decided; nothing is left in Proposed.
    accepted_line = (
        'connectsoft_factory_learning_proposals{kind="prompt-improvement",state="Accepted",'
        'tenant=""} 1.0'
    )

    async def counted() -> bool:
        return accepted_line in (await http.get(service.metrics_url)).text

    await until(counted)
    assert 'state="Proposed"' not in (await http.get(service.metrics_url)).text

    # A neighbour on plain aiokafka, from offset 0: each change once, in order per proposal.
    raised = await consume(
        kafka_bootstrap, service.prefix + topics.LEARNING_PROPOSAL_RAISED, 1, timeout=30
    )
    decided = await consume(
        kafka_bootstrap, service.prefix + topics.LEARNING_PROPOSAL_DECIDED, 2, timeout=30
    )
    assert [r.key.decode() for r in raised + decided] == [proposal_id] * 3
    [raised_event] = [json.loads(r.value) for r in raised]
    assert raised_event["type"] == "evaluation.learning.v1.LearningProposalRaised"
    assert raised_event["data"] == {
        "proposalId": proposal_id, "tenantId": tenant, "kind": "prompt-improvement",
        "targetAssetId": AGENT, "targetVersion": "1.4.0",
    }  # fmt: skip
    changes = [json.loads(r.value)["data"] for r in sorted(decided, key=lambda r: r.offset)]
    assert changes == [
        {"proposalId": proposal_id, "tenantId": tenant, "state": "InReview",
         "resultingReleaseId": None},
        {"proposalId": proposal_id, "tenantId": tenant, "state": "Accepted",
         "resultingReleaseId": "release-77"},
    ]  # fmt: skip
    ids = [json.loads(r.value)["id"] for r in raised + decided]
    assert len(set(ids)) == 3
    # Nothing more arrives: no change was published twice.
    more = await quiet_for(kafka_bootstrap, service.prefix + topics.LEARNING_PROPOSAL_DECIDED, 3)
    assert len(more) == 2
