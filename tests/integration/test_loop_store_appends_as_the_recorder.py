"""The bus's append on the event loop (``services.store.fast_loop_store``) held to the plain
path, the store's recorder in a thread: the same rows, positions in order, the same refusal of
a version taken."""

import asyncio
import uuid
from datetime import UTC, datetime

import pytest
from eventsourcing.persistence import IntegrityError, StoredEvent

from contracts.feedback import RecordFeedback
from services.bus.fast_marking import as_new
from services.bus.issued import Issued
from services.feedback.handlers import record_feedback
from services.processes.bootstrap import Runtime
from services.store.event_store import EVENTS_TABLE
from services.store.existing import existing


def stored_feedback(runtime: Runtime, count: int) -> list[StoredEvent]:
    command = RecordFeedback.model_validate(
        {"projectId": "p", "subjectKind": "run", "subjectRef": "r", "kind": "rating", "rating": 4}
    )
    return [
        runtime.store.mapper.to_stored_event(
            record_feedback(
                runtime.store,
                as_new(Issued(command, "t", "alice", str(uuid.uuid4()), datetime.now(UTC))),
            ).created[0]
        )
        for _ in range(count)
    ]


async def rows(runtime: Runtime, ids: list[int]) -> list[tuple[object, ...]]:
    found = await runtime.pool.fetch(
        f"SELECT notification_id, originator_id, originator_version, topic, state "
        f"FROM {EVENTS_TABLE} WHERE notification_id = ANY($1) ORDER BY notification_id",
        ids,
    )
    return [tuple(row) for row in found]


@pytest.mark.parametrize("count", [1, 3, 40])
async def test_an_append_on_the_loop_stores_what_the_recorder_stores(
    runtime: Runtime, count: int
) -> None:
    on_loop, in_thread = stored_feedback(runtime, count), stored_feedback(runtime, count)
    recorder = runtime.store.recorder

    loop_ids = await runtime.loop_store.append(on_loop)
    thread_ids = list(await asyncio.to_thread(recorder.insert_events, in_thread) or [])

    for ids, events in ((loop_ids, on_loop), (thread_ids, in_thread)):
        assert ids == sorted(ids)
        assert len(ids) == count
        assert [row[1:] for row in await rows(runtime, ids)] == [
            (e.originator_id, e.originator_version, e.topic, e.state) for e in events
        ]
    assert loop_ids[-1] < thread_ids[0]
    appended = {e.originator_id for e in on_loop + in_thread}
    asked = appended | {uuid.uuid4()}
    assert await runtime.loop_store.existing(asked) == appended
    assert await asyncio.to_thread(existing, runtime.store, asked) == appended
    with pytest.raises(IntegrityError):
        await runtime.loop_store.append(on_loop[:1])
    with pytest.raises(IntegrityError):
        await asyncio.to_thread(recorder.insert_events, in_thread[:1])
