"""Which units of the bus are one decision of the audit (decisions D281): one caller's batch
with no position to keep (the batch route's), and nothing else."""

import asyncio
import uuid
from datetime import UTC, datetime

from eventsourcing.persistence import Tracking

from contracts.feedback import RecordFeedback
from services.bus.audit import one_decision
from services.bus.audit_rows import listed
from services.bus.issued import Issued
from services.bus.units import Unit

FEEDBACK = {
    "projectId": "p",
    "subjectKind": "run",
    "subjectRef": "r",
    "kind": "rating",
    "rating": 4,
}


def unit(commands: int, tracking: Tracking | None, batch: bool) -> Unit:
    at = datetime.now(UTC)
    issued = [
        Issued(RecordFeedback.model_validate(FEEDBACK), "t", "ann", str(uuid.uuid4()), at)
        for _ in range(commands)
    ]
    return Unit(issued, tracking, batch, asyncio.get_running_loop().create_future())


async def test_only_one_callers_batch_without_a_position_is_one_decision() -> None:
    assert one_decision(unit(3, None, batch=True))
    assert not one_decision(unit(3, Tracking("inbound", 7), batch=True))  # a Kafka poll
    assert not one_decision(unit(1, None, batch=True))
    assert not one_decision(unit(1, None, batch=False))


def test_a_rows_roles_are_sorted_and_none_is_no_role() -> None:
    assert listed(frozenset({"Reviewer", "PlatformAdmin"})) == ("PlatformAdmin", "Reviewer")
    assert listed(None) == ()
