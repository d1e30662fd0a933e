"""Reader by reader, a real read model (the Inbox) and the hand-over webhook
park the event they keep failing on, apply everything else, hold the same aggregate's later
events behind it, and after a fix ``parked retry`` applies them in order. (The relay's and the
inbound consumer's own tests are in test_relay.py and test_inbound.py.)"""

import asyncio
from collections.abc import Callable, Sequence
from typing import Any
from uuid import UUID

from contracts.reports import (
    ComposeWrongAnswer,
    DraftReport,
    ReviewReport,
    ReviewReportCommand,
    SubmitReport,
)
from projections.inbox import Inbox, get_report
from services.followers.follower import Connection, Follower, Positioned
from services.followers.parked import list_parked, release
from services.processes.bootstrap import Runtime
from services.projecting.runner import ProjectionReader, ensure_schema, rebuild
from services.reports.webhook import HAND_OVER_WEBHOOK
from services.webhooks.reader import WebhookReader
from services.webhooks.signed import SignedWebhook
from tests.e2e.conftest import WEBHOOK_SECRET, Receiver, receiver  # noqa: F401 (a fixture)
from tests.integration.test_inbox import send
from tests.unit.test_wrong_answer import SEED_FACTS


async def following(follower: Follower, done: Callable[[], Any], timeout: float = 30) -> None:
    """Run the follower until ``done()`` holds (it may be a coroutine function)."""
    stop = asyncio.Event()
    task = asyncio.create_task(follower.run(stop))
    try:
        async with asyncio.timeout(timeout):
            while not ((await r) if asyncio.iscoroutine(r := done()) else r):
                assert not task.done(), task
                await asyncio.sleep(0.05)
    finally:
        stop.set()
        await task


async def reports(runtime: Runtime, n: int, category: str) -> list[UUID]:
    """Submitted reports: bug reports are handed over; wrong-answer reports stay in the Inbox
    and are triaged too (three events each)."""
    ids = []
    for i in range(n):
        if category == "bug":
            draft: Any = DraftReport.model_validate({"category": "bug", "message": f"broken {i}"})
        else:
            draft = ComposeWrongAnswer.model_validate(SEED_FACTS)
        state = await send(runtime, draft, f"d{i}")
        await send(runtime, SubmitReport(report_id=state.report_id), f"s{i}")
        if category != "bug":
            review = ReviewReport.model_validate({"status": "Triaged"})
            command = ReviewReportCommand(report_id=state.report_id, review=review)
            await send(runtime, command, f"r{i}")
        ids.append(state.report_id)
    return ids


class BrokenInbox(Inbox):
    """The Inbox, failing on the reports in ``broken`` (a bug that meets some data only)."""

    def __init__(self) -> None:
        self.broken: set[UUID] = set()

    async def apply(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        for item in batch:
            if item.event.originator_id in self.broken:
                raise ValueError(f"cannot project {item.event.originator_id}")
        await super().apply(conn, schema, batch)


async def test_a_read_model_parks_a_report_it_cannot_project_and_retry_applies_it_in_order(
    runtime: Runtime,
) -> None:
    bad, *good = await reports(runtime, 3, "answer")
    inbox = BrokenInbox()
    inbox.broken = {bad}
    await ensure_schema(runtime.pool, inbox, "rm_inbox")
    reader = ProjectionReader(inbox)
    follower = Follower(runtime.store, runtime.pool, reader, idle_poll=0.1, backoff=0.01)

    async def projected(schema: str = "rm_inbox") -> dict[UUID, Any]:
        reports = {
            r: await get_report(runtime.pool, "t1", r, reader="rita", schema=schema)
            for r in (bad, *good)
        }
        return {r: report for r, report in reports.items() if report is not None}

    async def parked_all() -> bool:  # drafted, submitted, triaged
        return len(await list_parked(runtime.pool, reader.name)) == 3

    await following(follower, parked_all)
    assert set(await projected()) == set(good)  # the others flowed on
    parked = await list_parked(runtime.pool, reader.name)
    assert {p.originator_id for p in parked} == {bad}
    first, *behind = parked
    assert "ValueError: cannot project" in first.error
    assert [p.originator_version for p in parked] == sorted(p.originator_version for p in parked)
    assert all(p.behind == first.position for p in behind)  # waiting, not failed

    inbox.broken.clear()  # fixed
    assert await release(runtime.pool, reader.name) == len(parked)

    async def released() -> bool:
        return not await list_parked(runtime.pool, reader.name) and bad in await projected()

    await following(follower, released)
    rebuilt = await rebuild(runtime.store, runtime.pool, Inbox(), swap=False)
    assert await projected() == await projected(rebuilt)
    assert (await projected())[bad]["status"] == "Triaged"  # every event applied, in order


async def test_the_hand_over_webhook_parks_what_it_cannot_send_and_delivers_the_rest(
    runtime: Runtime,
    receiver: Receiver,  # noqa: F811 (the fixture imported above)
) -> None:
    bad, *good = await reports(runtime, 3, "bug")
    signed = SignedWebhook(url=receiver.url, secret=WEBHOOK_SECRET)
    webhook = WebhookReader(
        runtime.store, runtime.bus, HAND_OVER_WEBHOOK, signed, source="urn:test"
    )
    broken = {bad}
    deliver = webhook.deliver

    async def deliver_unless_broken(item: Positioned) -> None:
        if item.event.originator_id in broken:
            raise ValueError(f"cannot sign {item.event.originator_id}")
        await deliver(item)

    webhook.deliver = deliver_unless_broken  # type: ignore[method-assign]
    follower = Follower(runtime.store, runtime.pool, webhook, idle_poll=0.1, backoff=0.01)

    def delivered() -> set[str]:
        return {r["event"]["subject"] for r in receiver.received}

    async def parked_one() -> bool:
        return len(await list_parked(runtime.pool, webhook.name)) == 1

    await following(follower, lambda: len(delivered()) == 2 and parked_one())
    assert delivered() == {str(g) for g in good}
    [parked] = await list_parked(runtime.pool, webhook.name)
    assert (parked.originator_id, "ValueError: cannot sign") == (bad, parked.error[:23])

    broken.clear()
    assert await release(runtime.pool, webhook.name) == 1
    await following(follower, lambda: len(delivered()) == 3)
    assert delivered() == {str(r) for r in (bad, *good)}
    assert all(r["verified"] for r in receiver.received)
