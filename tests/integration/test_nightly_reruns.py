"""A change of an agent re-runs its confirmed cases first, end to end on the real Kafka and
PostgreSQL (seed 000: cases are "replayed whenever the instructions or the model change";
decisions D240–D243): the registry's AgentChanged arrives over Kafka, the next night runs the
changed agent's cases first within its cap and its lines say why, another tenant's change
reorders nothing here, a bad event goes to the dead letters naming the field, and the night
after orders as usual."""

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from eventsourcing.utils import get_topic

from contracts import topics
from services.edge.auth import SCOPES, new_key
from services.followers.waiting import wait_for_position
from services.nightly.agent_changes import AgentChange
from services.scheduling.orders import PlanNight
from services.store.event_store import EVENTS_TABLE
from tests.conftest import SEED_AGENT, Keys, event_count, maintain
from tests.integration.test_event_door import post
from tests.integration.test_learning import AGENT, raise_on
from tests.integration.test_nightly import (
    Agent,
    Door,
    auth,
    confirmed_case,
    opened_door,
    runner,
    tenant_of,
)
from tests.integration.test_nightly import standin as standin  # the module's stand-in agent
from tests.kafka_peer import consume, inbound, produce, settled

OTHER = "AgenticOffice/Agent/Other"
CHANGED_AT = "2026-12-04T10:00:00Z"


def agent_changed(tenant: str, data: dict[str, Any], event_id: str = "") -> bytes:
    return json.dumps(
        {"specversion": "1.0", "id": event_id or str(uuid.uuid4()), "source": "urn:registry",
         "type": "factory.registry.v1.AgentChanged", "tenantid": tenant,
         "datacontenttype": "application/json", "data": data}
    ).encode()  # fmt: skip


def tenant_b(keys: Keys) -> str:
    return str(json.loads(keys.entries)[1]["tenant"])


@dataclass(frozen=True)
class MaintainerKeys(Keys):
    """Alice (tenant A) and bob (tenant B), every scope; maria, tenant A's AssetMaintainer
    and nothing else."""

    maria: str = ""


@pytest.fixture
def keys() -> MaintainerKeys:
    tenant_a, tenant_b = f"tenant-a-{uuid.uuid4().hex[:6]}", f"tenant-b-{uuid.uuid4().hex[:6]}"
    a, entry_a = new_key(tenant_a, "alice", list(SCOPES))
    b, entry_b = new_key(tenant_b, "bob", list(SCOPES))
    maria, entry_m = new_key(tenant_a, "maria", ["factory.assets.write"], roles=["AssetMaintainer"])
    entries = json.dumps([entry_a, entry_b, entry_m])
    return MaintainerKeys(a, b, "", "", "", entries, "", maria)


@pytest.fixture
async def door(
    database_url: str, keys: Keys, standin: str, tmp_path: Path, kafka_bootstrap: str
) -> AsyncIterator[Door]:
    async with opened_door(database_url, keys, standin, tmp_path, kafka=kafka_bootstrap) as d:
        await d.runtime.ensure_topics()
        yield d


async def ran_by_hand(door: Door, case_id: str) -> None:
    run = await door.http.post(
        f"/factory/evals/cases/{case_id}/runs", json={"conversations": 1},
        headers=auth(door.keys.a),
    )  # fmt: skip
    assert run.status_code == 201, run.text


async def night(door: Door, day: str) -> dict[str, Any]:
    runtime = door.runtime
    head = await runtime.pool.fetchval(f"SELECT max(notification_id) FROM {EVENTS_TABLE}")
    await wait_for_position(runtime.pool, "rm_nights", head, 20)
    read = await door.http.get(f"/factory/evals/nights/{day}", headers=auth(door.keys.a))
    assert read.status_code == 200, read.text
    found: dict[str, Any] = read.json()
    return found


def order_of(day: date) -> PlanNight:
    return PlanNight(date=day, now=datetime(day.year, day.month, day.day, 1, 0, tzinfo=UTC))


async def test_a_changed_agents_cases_run_first_and_the_night_says_why(
    door: Door, standin: str, kafka_bootstrap: str
) -> None:
    ask = "Welchen Stundenansatz verrechne ich"
    others = [await confirmed_case(door, f"{ask}? (other {n})", agent=OTHER) for n in (1, 2)]
    coach = [await confirmed_case(door, f"{ask}? (coach {n})") for n in (1, 2)]
    for case_id in [*others, *coach]:  # the coach's cases ran last: they would come last
        await ran_by_hand(door, case_id)

    prefix = door.runtime.settings.topic_prefix
    change = {"agent": SEED_AGENT, "what": "model", "from": "claude-x", "to": "claude-y",
              "at": CHANGED_AT, "aNewField": True}  # fmt: skip
    tenant_a = tenant_of(door.keys)
    await produce(kafka_bootstrap, prefix + topics.AGENT_CHANGED, [
        agent_changed(tenant_a, change, "change-1"),
        agent_changed(tenant_a, change, "change-1"),  # redelivered: applied once
        agent_changed(tenant_a, {**change, "what": "colour"}),  # not a change we know
        # Tenant B's agent of the same name as tenant A's other agent changed: not A's.
        agent_changed(tenant_b(door.keys), {**change, "agent": OTHER}),
    ])  # fmt: skip
    async with inbound(door.runtime) as consumer:
        await settled(consumer, 4)
    assert consumer.dead_lettered == 1
    recorded = await door.runtime.pool.fetchval(
        f"SELECT count(*) FROM {EVENTS_TABLE} WHERE topic = $1", get_topic(AgentChange.Recorded)
    )
    assert recorded == 2  # tenant A's once, tenant B's once
    (dead,) = await consume(kafka_bootstrap, topics.dead_letter(prefix + topics.AGENT_CHANGED), 1)
    assert dict(dead.headers)["dlt-field"] == b"what"

    agent = Agent(standin)
    await runner(door, agent, max_cases=2, conversations_per_case=1)(order_of(date(2026, 12, 5)))
    first = await night(door, "2026-12-05")
    reason = "re-run first: model changed claude-x → claude-y at 2026-12-04T10:00:00+00:00"
    assert {s["case"] for s in first["selected"]} == set(coach)  # ahead of older last runs
    assert [s["rerun"] for s in first["selected"]] == [reason, reason]
    lines = {line["case"]: line for line in first["lines"]}
    for case_id in coach:
        assert (lines[case_id]["outcome"], lines[case_id]["rerun"]) == ("ran", reason)
    for case_id in others:  # tenant B's change of OTHER reordered nothing here
        assert lines[case_id]["outcome"] == "over-cap"
        assert lines[case_id]["rerun"] is None
    assert first["note"].startswith(f"re-run first after a change of {SEED_AGENT}: 2 selected")
    assert "cap reached: 2 cases ran at most, 2 left over-cap" in first["note"]

    # The night ran them after the change: it is consumed, the next night orders as usual.
    await runner(door, agent, max_cases=2, conversations_per_case=1)(order_of(date(2026, 12, 6)))
    second = await night(door, "2026-12-06")
    assert {s["case"] for s in second["selected"]} == set(others)  # the oldest last runs
    assert [s["rerun"] for s in second["selected"]] == [None, None]
    assert "re-run first" not in second["note"]


def posted(data: dict[str, Any], **attributes: str) -> dict[str, Any]:
    return {"specversion": "1.0", "id": f"e-{uuid.uuid4().hex[:8]}", "source": "urn:registry",
            "type": "factory.registry.v1.AgentChanged", "data": data, **attributes}  # fmt: skip


async def test_over_http_a_bad_change_names_the_field_and_a_maintainer_changes_only_theirs(
    door: Door,
) -> None:
    """D241: ``POST /factory/events`` reads the change as Kafka does; a bad one is a 422
    naming the field, recording nothing; an AssetMaintainer declares changes of the agents
    the register names them maintainer of, and no other; another tenant is refused."""
    keys = door.keys
    assert isinstance(keys, MaintainerKeys)
    mine = "AgenticOffice/Agent/Marias"
    await maintain(door.http, keys.a, ("maria",), agent=mine)
    good = {"agent": mine, "what": "instructions", "from": "v1", "to": "v2", "at": CHANGED_AT}
    before = await event_count(door.runtime)
    for bad, field in (
        ({**good, "what": "colour"}, "what"),
        ({key: value for key, value in good.items() if key != "to"}, "to"),
        ({**good, "at": "yesterday"}, "at"),
        ({**good, "agent": " "}, "agent"),
    ):
        answered = await post(door.http, posted(bad), Authorization=f"Bearer {keys.a}")
        assert answered.status_code == 422, answered.text
        assert answered.json()["field"].endswith(field), answered.json()
    other_tenant = posted(good, tenantid=tenant_b(keys))
    refused = await post(door.http, other_tenant, Authorization=f"Bearer {keys.a}")
    assert refused.status_code == 403, refused.text
    not_hers = posted({**good, "agent": SEED_AGENT})
    refused = await post(door.http, not_hers, Authorization=f"Bearer {keys.maria}")
    assert refused.status_code == 403, refused.text
    assert await event_count(door.runtime) == before  # nothing recorded, not even a receipt
    applied = await post(door.http, posted(good), Authorization=f"Bearer {keys.maria}")
    assert applied.status_code == 201, applied.text
    again = await post(door.http, posted(good), Authorization=f"Bearer {keys.a}")
    assert again.status_code == 201, again.text  # another CloudEvent, the same change
    recorded = await door.runtime.pool.fetchval(
        f"SELECT count(*) FROM {EVENTS_TABLE} WHERE topic = $1", get_topic(AgentChange.Recorded)
    )
    assert recorded == 1  # one change, however often it is said (its natural key, D241)


async def test_an_accepted_proposals_release_re_runs_its_agents_cases_first(
    door: Door, standin: str
) -> None:
    """D240: the existing release of an accepted learning proposal (SPEC C32) is a change of
    the agent it targets."""
    runtime = door.runtime
    runtime.start_projections(["learning_proposals"])
    ask = "Welchen Stundenansatz verrechne ich"
    other = await confirmed_case(door, f"{ask}? (coach)")
    target = await confirmed_case(door, f"{ask}? (agent-42)", agent=AGENT)
    for case_id in (other, target):
        await ran_by_hand(door, case_id)
    proposal = await raise_on(runtime, tenant_of(door.keys), 0)
    headers = auth(door.keys.a)
    await door.http.post(f"/factory/learning/proposals/{proposal}/pick-up", headers=headers)
    decided = await door.http.post(
        f"/factory/learning/proposals/{proposal}/decide", json={"decision": "accept"},
        headers=headers,
    )  # fmt: skip
    assert decided.status_code == 200, decided.text
    released = await door.http.post(
        f"/factory/learning/proposals/{proposal}/release", json={"releaseId": "rel-2"},
        headers=headers,
    )  # fmt: skip
    assert released.status_code == 200, released.text

    agent = Agent(standin)
    await runner(door, agent, max_cases=1, conversations_per_case=1)(order_of(date(2026, 12, 5)))
    found = await night(door, "2026-12-05")
    assert [s["case"] for s in found["selected"]] == [target]
    assert found["selected"][0]["rerun"].startswith("re-run first: release changed to rel-2 at ")
    assert found["note"].startswith(f"re-run first after a change of {AGENT}: 1 selected")
