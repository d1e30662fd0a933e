"""Retention of report text per tenant (decisions D45), on a real PostgreSQL: the scheduler's
daily order destroys the keys of months past the period and records it; the reports stay
counted, only their text reads as erased; newer reports and other tenants keep theirs."""

import dataclasses
import uuid
from datetime import UTC, date, datetime
from typing import Any

import pytest
from eventsourcing.persistence import StoredEvent
from eventsourcing.utils import get_topic

from contracts.reports import ComposeWrongAnswer, SubmitReport
from projections.inbox import Inbox, InboxFilter, list_inbox
from services.bus.issued import Issued
from services.privacy.domain import Expiry
from services.processes.bootstrap import Runtime
from services.processes.scheduled import carried_out_by
from services.projecting.live import ProjectionRunner
from services.scheduling.orders import ExpireOldText
from services.store.event_store import EVENTS_TABLE
from services.store.sealing import ERASED
from tests.unit.test_wrong_answer import SEED_FACTS

pytestmark = pytest.mark.integration
OLD, NEW = datetime(2025, 10, 20, 9, tzinfo=UTC), datetime(2026, 11, 20, 9, tzinfo=UTC)
TODAY = date(2026, 12, 2)


async def report(runtime: Runtime, tenant: str, words: str, at: datetime) -> None:
    body = ComposeWrongAnswer.model_validate({**SEED_FACTS, "account": words})
    state = (await runtime.bus.execute(Issued(body, tenant, "rita", uuid.uuid4().hex, at))).result
    await runtime.bus.execute(
        Issued(SubmitReport(report_id=state.report_id), tenant, "rita", uuid.uuid4().hex, at)
    )


async def inbox(runtime: Runtime, tenant: str) -> list[dict[str, Any]]:
    runner = ProjectionRunner(runtime.store, runtime.pool, Inbox())
    await runner.start()
    await runner.catch_up()
    return (await list_inbox(runtime.pool, tenant, InboxFilter()))[0]


async def expired(runtime: Runtime) -> list[StoredEvent]:
    rows = await runtime.pool.fetch(
        f"SELECT originator_id, originator_version, topic, state FROM {EVENTS_TABLE} "
        "WHERE topic = $1",
        get_topic(Expiry.TextExpired),
    )
    return [StoredEvent(r[0], r[1], r[2], bytes(r[3])) for r in rows]


async def test_text_past_a_tenants_retention_reads_as_erased_and_the_reports_stay_counted(
    runtime: Runtime,
) -> None:
    kept, expiring = f"kept-{uuid.uuid4().hex[:6]}", f"expiring-{uuid.uuid4().hex[:6]}"
    for tenant in (kept, expiring):
        await report(runtime, tenant, f"old words of {tenant}", OLD)
        await report(runtime, tenant, f"new words of {tenant}", NEW)
    given = dataclasses.replace(
        runtime.given(),
        settings=runtime.settings.model_copy(update={"text_retention_months": {expiring: 12}}),
    )
    await carried_out_by(given, ExpireOldText)(ExpireOldText(TODAY, NEW))

    messages = sorted(item["message"] for item in await inbox(runtime, expiring))
    assert messages == sorted([ERASED, f"new words of {expiring}"])
    kept_messages = sorted(item["message"] for item in await inbox(runtime, kept))
    assert kept_messages == sorted([f"old words of {kept}", f"new words of {kept}"])

    # Recorded as an event; a second run destroys nothing more and records nothing.
    expiries = await expired(runtime)
    assert len(expiries) == 1
    event = runtime.store.mapper.to_domain_event(expiries[0])
    assert isinstance(event, Expiry.TextExpired)
    assert (event.tenant_id, event.before, len(event.keys)) == (expiring, "2025-12", 1)
    await carried_out_by(given, ExpireOldText)(ExpireOldText(TODAY, NEW))
    assert len(await expired(runtime)) == 1
