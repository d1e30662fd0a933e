"""The role rules on Kafka (SPEC C52; decisions D27), on a real broker: a command acts in the
roles its ``source`` is configured to hold, narrowed by its ``role`` extension attribute; a
command its roles do not permit, or naming a role its source does not hold, is dead-lettered
``not-permitted`` and records nothing. Feedback records the role it was given in (C05)."""

import json
import uuid
from typing import Any

from eventsourcing.utils import get_topic

from contracts import topics
from services.bus.audit import AuditFilter, audit_page
from services.feedback.domain import Feedback
from services.processes.bootstrap import Runtime
from services.store.event_store import EVENTS_TABLE
from tests.kafka_peer import consume, inbound, produce, settled

DATA = {"projectId": "p", "subjectKind": "memory", "subjectRef": "m-1", "kind": "escalation"}


def command(source: str, role: str | None, tenant: str = "tenant-r") -> bytes:
    event: dict[str, Any] = {
        "specversion": "1.0",
        "id": str(uuid.uuid4()),
        "source": source,
        "type": "evaluation.feedback.v1.RecordFeedback",
        "tenantid": tenant,
        "actor": "someone",
        "datacontenttype": "application/json",
        "data": DATA,
    }
    if role is not None:
        event["role"] = role
    return json.dumps(event).encode()


async def given_as(runtime: Runtime) -> list[str | None]:
    rows = await runtime.pool.fetch(
        f"SELECT originator_id FROM {EVENTS_TABLE} WHERE topic = $1 ORDER BY notification_id",
        get_topic(Feedback.Recorded),
    )
    found = [runtime.store.repository.get(row["originator_id"]) for row in rows]
    return [feedback.given_as for feedback in found]


async def test_a_kafka_command_acts_in_the_roles_of_its_source(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    kafka_runtime.settings.kafka_source_roles = {
        "urn:reviews": ["Reviewer", "Observer"],
        "urn:watcher": ["Observer"],
        "*": [],
    }
    await kafka_runtime.ensure_topics()
    command_topic = kafka_runtime.settings.topic_prefix + topics.RECORD_FEEDBACK
    await produce(
        kafka_bootstrap,
        command_topic,
        [
            command("urn:reviews", None),  # applied, as a reviewer
            command("urn:reviews", "Observer"),  # narrowed to a role that may not: refused
            command("urn:reviews", "Operator"),  # a role its source does not hold: refused
            command("urn:watcher", None),  # an observer changes nothing
            command("urn:unknown", None),  # a source not named holds ``*``: none here
        ],
        key=b"same-partition",
    )
    async with inbound(kafka_runtime) as consumer:
        await settled(consumer, 5)
    assert (consumer.applied, consumer.dead_lettered) == (1, 4)
    assert await given_as(kafka_runtime) == ["reviewer"]
    dead = await consume(kafka_bootstrap, topics.dead_letter(command_topic), 4)
    headers = [dict(m.headers) for m in dead]
    assert {h["dlt-error"] for h in headers} == {b"not-permitted"}
    assert {h["dlt-field"] for h in headers} == {b"role"}
    # Decisions D110: each of the five is one row of the audit at the Kafka door, the one
    # refused while read (a role its source does not hold) as the bus's refusals are.
    await kafka_runtime.bus.flush_audit()
    rows, _ = await audit_page(kafka_runtime.pool, "tenant-r", AuditFilter())
    assert sorted((r["command"], r["result"], r["reason"], r["door"]) for r in rows) == sorted(
        [
            ("RecordFeedback", "applied", None, "kafka"),
            ("RecordFeedback", "refused", "not-permitted", "kafka"),
            ("evaluation.feedback.v1.RecordFeedback", "refused", "not-permitted", "kafka"),
            ("RecordFeedback", "refused", "not-permitted", "kafka"),
            ("RecordFeedback", "refused", "not-permitted", "kafka"),
        ]
    )
    by_door = next(r for r in rows if r["command"].startswith("evaluation."))
    assert (by_door["actor"], by_door["roles"]) == ("someone", ["Observer", "Reviewer"])
