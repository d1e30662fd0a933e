"""Retention of report and comment text per tenant (decisions D45, D75), on a real
PostgreSQL: the scheduler's daily order destroys the keys of months past the period and
records it, and deletes old comments' text; the reports and feedback stay counted, only their
text reads as erased; newer ones and other tenants keep theirs."""

import dataclasses
import uuid
from datetime import UTC, date, datetime
from typing import Any

import pytest
from eventsourcing.persistence import StoredEvent
from eventsourcing.utils import get_topic

from contracts.feedback import RecordFeedback
from contracts.reports import ComposeWrongAnswer, SubmitReport
from projections.feedback_list import FeedbackList, list_feedback
from projections.inbox import Inbox, InboxFilter, list_inbox
from services.bus.issued import Issued
from services.privacy.domain import Expiry
from services.processes.bootstrap import Runtime
from services.processes.scheduled import carried_out_by
from services.projecting.live import ProjectionRunner
from services.scheduling.orders import ExpireOldText
from services.store.artifacts import artifact_exists, put_artifact
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


async def comment(runtime: Runtime, tenant: str, words: str, at: datetime) -> str:
    """Feedback given at ``at`` whose comment says ``words``; the comment's reference."""
    ref = await put_artifact(runtime.pool, tenant, words.encode(), "text/plain")
    body = RecordFeedback.model_validate({
        "projectId": "p1", "subjectKind": "run", "subjectRef": f"run-{uuid.uuid4().hex[:6]}",
        "kind": "comment", "commentRef": ref,
    })  # fmt: skip
    await runtime.bus.execute(Issued(body, tenant, "rita", uuid.uuid4().hex, at))
    return ref


async def test_comments_past_a_tenants_retention_are_deleted_and_the_feedback_stays_counted(
    runtime: Runtime,
) -> None:
    """Decisions D75: a comment's text (an artifact) of feedback given before the first kept
    month is deleted; one the same bytes of a newer feedback still reference is kept."""
    kept, expiring = f"kept-{uuid.uuid4().hex[:6]}", f"expiring-{uuid.uuid4().hex[:6]}"
    refs = {}
    for tenant in (kept, expiring):
        refs[tenant, "old"] = await comment(runtime, tenant, f"old comment of {tenant}", OLD)
        refs[tenant, "new"] = await comment(runtime, tenant, f"new comment of {tenant}", NEW)
        refs[tenant, "both"] = await comment(runtime, tenant, f"said twice in {tenant}", OLD)
        await comment(runtime, tenant, f"said twice in {tenant}", NEW)
    runner = ProjectionRunner(runtime.store, runtime.pool, FeedbackList())
    await runner.start()
    await runner.catch_up()
    given = dataclasses.replace(
        runtime.given(),
        settings=runtime.settings.model_copy(update={"text_retention_months": {expiring: 12}}),
    )
    await carried_out_by(given, ExpireOldText)(ExpireOldText(TODAY, NEW))

    async def present(tenant: str, which: str) -> bool:
        return await artifact_exists(runtime.pool, tenant, refs[tenant, which])

    assert [await present(expiring, w) for w in ("old", "new", "both")] == [False, True, True]
    assert [await present(kept, w) for w in ("old", "new", "both")] == [True, True, True]
    # The feedback stays, counted, its reference kept.
    page = await list_feedback(runtime.pool, expiring)
    assert len(page.items) == 4
    assert refs[expiring, "old"] in {item["commentRef"] for item in page.items}
