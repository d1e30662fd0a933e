"""Owner outcomes and closed tasks over real Kafka (SPEC M33, M45): the agents' runtime and the
task system publish; the inbound consumer applies each once, reading tolerantly, and a message
that breaks a rule goes to the dead-letter topic naming the field."""

import json
import uuid
from typing import Any

from eventsourcing.utils import get_topic

from contracts import topics
from services.appraisal.closure import TaskClosure
from services.appraisal.owner_outcomes import DraftOutcomes
from services.processes.bootstrap import Runtime
from services.store.event_store import EVENTS_TABLE
from tests.kafka_peer import consume, inbound, produce, settled

AT = "2026-12-01T10:00:00Z"


def cloudevent(type_: str, data: dict[str, Any]) -> bytes:
    return json.dumps(
        {"specversion": "1.0", "id": str(uuid.uuid4()), "source": "urn:agents", "type": type_,
         "tenantid": "tenant-k", "datacontenttype": "application/json", "data": data}
    ).encode()  # fmt: skip


async def count(runtime: Runtime, event_class: type) -> int:
    found = await runtime.pool.fetchval(
        f"SELECT count(*) FROM {EVENTS_TABLE} WHERE topic = $1", get_topic(event_class)
    )
    return int(found)


async def test_owner_outcomes_and_closed_tasks_arrive_over_kafka(
    kafka_runtime: Runtime, kafka_bootstrap: str
) -> None:
    await kafka_runtime.ensure_topics()
    prefix = kafka_runtime.settings.topic_prefix
    outcome = {"outcomeId": "oc-1", "runId": "r-1", "draftId": "d-1",
               "verdict": "error_exposed", "recordedAt": AT, "aNewField": {"x": 1}}  # fmt: skip
    harm = {**outcome, "outcomeId": "oc-2", "draftId": "d-2", "verdict": "harm"}
    await produce(kafka_bootstrap, prefix + topics.OWNER_OUTCOME_RECORDED, [
        cloudevent("factory.agents.v1.OwnerOutcomeRecorded", outcome),
        cloudevent("factory.agents.v1.OwnerOutcomeRecorded", harm),  # no commitment
    ], key=b"same")  # fmt: skip
    closed = {"taskId": "task-1", "transitionId": "tr-1", "status": "done", "runIds": ["r-1"],
              "closedAt": AT}  # fmt: skip
    await produce(kafka_bootstrap, prefix + topics.TASK_CLOSED,
                  [cloudevent("factory.tasks.v1.TaskClosed", closed)])  # fmt: skip
    async with inbound(kafka_runtime) as consumer:
        await settled(consumer, 3)
    assert (consumer.applied, consumer.dead_lettered) == (2, 1)
    assert await count(kafka_runtime, DraftOutcomes.Recorded) == 1
    assert await count(kafka_runtime, TaskClosure.Noted) == 1
    (dead,) = await consume(
        kafka_bootstrap, topics.dead_letter(prefix + topics.OWNER_OUTCOME_RECORDED), 1
    )
    assert dict(dead.headers)["dlt-field"] == b"commitment"
