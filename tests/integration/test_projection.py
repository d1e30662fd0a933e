"""The feedback list read model, fed from the store's notification log on a real PostgreSQL."""

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime

from contracts.feedback import RecordFeedback
from projections.feedback_list import SELECTED, FeedbackList, list_feedback
from projections.inbox import Inbox
from projections.read_model import BULK_ROWS, insert_rows
from services.bus.issued import Issued
from services.followers.follower import Connection, Positioned, read_position, wait_for_position
from services.followers.parked import list_parked
from services.processes.bootstrap import Runtime
from services.projecting.runner import ProjectionRunner, rebuild, rebuild_many


async def record(runtime: Runtime, tenant: str, n: int, subject: str = "r") -> int:
    outcomes = await asyncio.gather(
        *(
            runtime.bus.execute(
                Issued(
                    RecordFeedback.model_validate(
                        {
                            "projectId": "p",
                            "subjectKind": "run",
                            "subjectRef": f"{subject}{i % 3}",
                            "kind": "rating",
                            "rating": 1 + i % 5,
                        }
                    ),
                    tenant,
                    "alice",
                    f"{tenant}-{subject}-{i}",
                    datetime.now(UTC),
                )
            )
            for i in range(n)
        )
    )
    return max(o.position for o in outcomes)


async def rows(runtime: Runtime, schema: str) -> list[tuple[object, ...]]:
    # Every column (a tuple of names in the statement would select one row of literals).
    query = f"SELECT {SELECTED} FROM {schema}.feedback ORDER BY position"
    records = await runtime.pool.fetch(query)
    return [tuple(r.values()) for r in records]


async def test_the_runner_applies_every_event_once_with_its_position(runtime: Runtime) -> None:
    head = await record(runtime, "t1", 25)
    runner = ProjectionRunner(runtime.store, runtime.pool, FeedbackList(), batch_size=7)
    await runner.start()
    assert await runner.catch_up() == 25
    assert await read_position(runtime.pool, runner.schema) == head
    assert await runner.catch_up() == 0  # nothing new: nothing applied again
    assert len(await rows(runtime, runner.schema)) == 25


async def test_a_position_already_applied_is_skipped(runtime: Runtime) -> None:
    """Two runners on one read model (a redelivery): each event lands once."""
    await record(runtime, "t1", 10)
    first = ProjectionRunner(runtime.store, runtime.pool, FeedbackList(), batch_size=3)
    second = ProjectionRunner(runtime.store, runtime.pool, FeedbackList(), batch_size=3)
    await first.start()
    await asyncio.gather(first.catch_up(), second.catch_up())
    assert len(await rows(runtime, first.schema)) == 10


async def test_a_rebuilt_read_model_equals_the_live_one(runtime: Runtime) -> None:
    await record(runtime, "t1", 40)
    live = ProjectionRunner(runtime.store, runtime.pool, FeedbackList())
    await live.start()
    await live.catch_up()
    await record(runtime, "t2", 15)
    await live.catch_up()
    fresh = await rebuild(runtime.store, runtime.pool, FeedbackList(), swap=False)
    assert fresh != live.schema
    assert await rows(runtime, fresh) == await rows(runtime, live.schema)
    assert await read_position(runtime.pool, fresh) == await read_position(
        runtime.pool, live.schema
    )


async def test_a_swapped_in_rebuild_keeps_following_the_log(runtime: Runtime) -> None:
    await record(runtime, "t1", 5)
    live = ProjectionRunner(runtime.store, runtime.pool, FeedbackList())
    await live.start()
    await live.catch_up()
    before = await rows(runtime, live.schema)
    await rebuild(runtime.store, runtime.pool, FeedbackList(), swap=True)
    assert await rows(runtime, live.schema) == before
    await record(runtime, "t1", 3, subject="later")
    await live.catch_up()
    assert len(await rows(runtime, live.schema)) == 8


async def test_a_reader_can_wait_for_its_own_write_without_sleeping(runtime: Runtime) -> None:
    runtime.start_projections()
    position = await record(runtime, "t1", 1)
    reached = await wait_for_position(runtime.pool, "rm_feedback_list", position, timeout=20)
    assert reached >= position
    page = await list_feedback(runtime.pool, "t1")
    assert len(page.items) == 1


async def test_the_list_filters_by_subject_and_kind_within_one_tenant(runtime: Runtime) -> None:
    await record(runtime, "t1", 9)
    await record(runtime, "t2", 9)
    runner = ProjectionRunner(runtime.store, runtime.pool, FeedbackList())
    await runner.start()
    await runner.catch_up()
    page = await list_feedback(runtime.pool, "t1", subject_kind="run", subject_ref="r0")
    assert len(page.items) == 3
    assert {i["tenantId"] for i in page.items} == {"t1"}
    assert (await list_feedback(runtime.pool, "t1", kind="comment")).items == []


async def test_pages_are_newest_first_and_chain_by_cursor(runtime: Runtime) -> None:
    await record(runtime, "t1", 7)
    runner = ProjectionRunner(runtime.store, runtime.pool, FeedbackList())
    await runner.start()
    await runner.catch_up()
    seen: list[int] = []
    before = None
    while True:
        page = await list_feedback(runtime.pool, "t1", limit=3, before=before)
        seen += [i["position"] for i in page.items]
        if page.next_before is None:
            break
        before = page.next_before
    assert seen == sorted(seen, reverse=True)
    assert len(seen) == len(set(seen)) == 7


class Refusing(FeedbackList):
    """The feedback list under another name, refusing the feedback on one subject."""

    name = "feedback_refusing"

    async def apply(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        if any(p.event.subject_ref == "bad0" for p in batch):
            raise ValueError("refused")
        await super().apply(conn, schema, batch)


async def test_read_models_rebuilt_together_equal_each_rebuilt_alone_and_one_failing_goes_alone(
    runtime: Runtime,
) -> None:
    """One read of the log for every read model being rebuilt. A read model
    whose page fails in that shared pass goes on alone on its own follower (which parks the
    event it keeps failing on); the others are not held back."""
    await record(runtime, "t1", 60)
    await record(runtime, "t2", 1, subject="bad")  # one event Refusing refuses
    await record(runtime, "t3", 30)
    alone = await rebuild(runtime.store, runtime.pool, FeedbackList(), swap=False)
    alone_rows = await rows(runtime, alone)
    together = await rebuild_many(
        runtime.store, runtime.pool, [FeedbackList(), Inbox(), Refusing()], swap=False
    )
    assert together == [
        "rm_feedback_list__rebuild",
        "rm_inbox__rebuild",
        "rm_feedback_refusing__rebuild",
    ]
    assert await rows(runtime, together[0]) == alone_rows
    refused = await rows(runtime, together[2])
    assert len(refused) == len(alone_rows) - 1  # all but the refused one
    parked = await list_parked(runtime.pool, together[2])
    assert [p.error.startswith("ValueError: refused") for p in parked] == [True]
    head = await asyncio.to_thread(runtime.store.recorder.max_notification_id)
    for schema in together:
        assert await read_position(runtime.pool, schema) == head


async def test_bulk_rows_are_inserted_once_whether_or_not_some_are_there_already(
    runtime: Runtime,
) -> None:
    """insert_rows copies many rows straight into the table; when one of them is there
    already, it falls back to the staging table and skips the taken keys, exactly as the
    row-by-row ``INSERT … ON CONFLICT DO NOTHING`` of a few rows does."""
    table = "bulk_check.items"
    await runtime.pool.execute(
        "CREATE SCHEMA bulk_check; CREATE TABLE bulk_check.items (id int PRIMARY KEY, v text)"
    )
    fresh = [(n, f"new{n}") for n in range(BULK_ROWS)]
    async with runtime.pool.acquire() as conn, conn.transaction():
        await insert_rows(conn, table, ("id", "v"), fresh, conflict="(id)")
        await insert_rows(conn, table, ("id", "v"), [(-1, "few")], conflict="(id)")
    overlapping = [(n, f"again{n}") for n in range(BULK_ROWS - 1, 2 * BULK_ROWS)]
    async with runtime.pool.acquire() as conn, conn.transaction():
        await insert_rows(conn, table, ("id", "v"), overlapping + overlapping[:3], conflict="")
    stored = dict(await runtime.pool.fetch("SELECT id, v FROM bulk_check.items"))
    assert len(stored) == 2 * BULK_ROWS + 1
    assert stored[-1] == "few"
    assert stored[BULK_ROWS - 1] == f"new{BULK_ROWS - 1}"  # there first: kept
    assert stored[BULK_ROWS] == f"again{BULK_ROWS}"
