"""A stand-in for the datasets context's RunCompleted handler, for appraisal's tests only.

Until that handler is merged, a test records a run's facts the way it will: an event whose
``run`` field holds the received RunCompleted (as JSON, which ``projections.appraisal.run_of``
reads like the model). At merge, tests switch to the real path (the neighbour event on Kafka
or the datasets handler) and this module goes.
"""

import uuid
from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from contracts.neighbours import RunCompleted
from services.store.event_store import EventStore


class HarvestedRun(Aggregate):
    class Recorded(Aggregate.Created):
        tenant_id: str
        run: dict[str, Any]

    def __init__(self, tenant_id: str, run: dict[str, Any]) -> None:
        self.tenant_id = tenant_id
        self.run = run


def record_run(store: EventStore, tenant_id: str, run: RunCompleted, at: datetime) -> None:
    recorded = HarvestedRun._create(
        HarvestedRun.Recorded,
        id=uuid.uuid4(),
        timestamp=at,
        tenant_id=tenant_id,
        run=run.model_dump(mode="json", by_alias=True),
    )
    store.save(recorded)
