"""A rebuild's bulk catch-up writes the rows live following writes, on a
real PostgreSQL: the three read models every FeedbackRecorded reaches (the feedback list, the
appraisal facts, the datasets' corrections), compared column by column, with the same keys and
indexes (the insert-only tables are loaded without their key, added after); and an event that
cannot be decoded fails only the pages of the read models that read it."""

import gc
import json
import multiprocessing
import os
import signal
import uuid
from concurrent.futures.process import BrokenProcessPool
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import services.projecting.apart
from contracts.feedback import RecordFeedback
from projections.appraisal import AppraisalFacts
from projections.datasets import Datasets
from projections.feedback_list import COLUMNS, FeedbackList
from projections.inbox import Inbox
from projections.read_model import BULK_ROWS, UNKEYED, Projection, insert_rows
from services.feedback.domain import Feedback
from services.followers.parked import list_parked
from services.followers.positions import read_position
from services.processes.bootstrap import Runtime
from services.projecting.keys import Key
from services.projecting.live import ProjectionRunner
from services.projecting.rebuild import Reached, rebuild_many
from services.store.event_store import EVENTS_TABLE

# Each read model's rows, every column, in a fixed order.
TABLES = {
    "feedback_list": [f"SELECT {', '.join(COLUMNS)} FROM {{}}.feedback ORDER BY position"],
    "appraisal": ["SELECT * FROM {}.feedback ORDER BY feedback_id"],
    "datasets": ["SELECT * FROM {}.corrections ORDER BY feedback_id"],
}


def bodies(n: int) -> list[dict[str, Any]]:
    """Feedback of every shape the three read models tell apart: ratings, comments and
    corrections, on runs and on other subjects, serving goals or none, naming a trace or none."""
    shapes: list[dict[str, Any]] = [
        {"subjectKind": "run", "kind": "rating", "rating": 3},
        {"subjectKind": "run", "kind": "comment", "commentRef": "artifact:note"},
        {"subjectKind": "run", "kind": "correction", "correctedArtifactRef": "artifact:fix"},
        {"subjectKind": "attempt", "kind": "correction", "correctedArtifactRef": "artifact:x"},
        {"subjectKind": "artifact", "kind": "rating", "rating": 1},
        {"subjectKind": "run", "kind": "rating", "rating": 5, "serves": ["charter:c1"]},
        {"subjectKind": "run", "kind": "rating", "rating": 2, "traceId": "ab" * 16},
        {"subjectKind": "run", "kind": "rating", "rating": 4, "traceId": "cd" * 16,
         "spanId": "ef" * 8, "genAi": {"gen_ai.request.model": "m"}},
    ]  # fmt: skip
    return [
        {"projectId": f"p{i % 4}", "subjectRef": f"s{i % 7}"} | shapes[i % len(shapes)]
        for i in range(n)
    ]


def record(runtime: Runtime, tenant: str, n: int) -> list[Feedback]:
    """``n`` pieces of feedback stored as the bus stores them, a few microseconds apart."""
    start = datetime(2026, 11, 30, 12, tzinfo=UTC)
    made = [
        Feedback.record(
            RecordFeedback.model_validate(body),
            feedback_id=uuid.uuid4(),
            tenant_id=tenant,
            given_by="alice",
            given_at=start + timedelta(microseconds=7919 * i),
            command_id=f"{tenant}-{i}",
            request_digest=f"digest-{i}",
        )
        for i, body in enumerate(bodies(n))
    ]
    runtime.store.save(*made)
    return made


async def rows(runtime: Runtime, name: str, schema: str) -> list[tuple[object, ...]]:
    found = []
    for query in TABLES[name]:
        found += [tuple(r.values()) for r in await runtime.pool.fetch(query.format(schema))]
    return found


async def indexes(runtime: Runtime, schema: str) -> list[str]:
    """The schema's indexes (primary keys among them), its name left out."""
    found = await runtime.pool.fetch(
        "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1", schema
    )
    return sorted(f"{r['indexname']}: {r['indexdef'].replace(schema, '')}" for r in found)


# A rebuild in one process, and one whose feedback two worker processes load apart, in
# chunks of a hundred positions (services.projecting.apart): they finish out of order.
PROCESSES = pytest.mark.parametrize("processes", [1, 2], ids=["together", "apart"])


def apart_in_small_chunks(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, str]]:
    """What each loading apart answered (the read models that failed, with why)."""
    answers: list[dict[str, str]] = []
    load_apart = services.projecting.apart.load_apart

    async def heard(*args: Any) -> dict[str, str]:
        answers.append(await load_apart(*args))
        return answers[-1]

    monkeypatch.setattr(services.projecting.apart, "CHUNK", 100)
    monkeypatch.setattr(services.projecting.apart, "load_apart", heard)
    return answers


@PROCESSES
async def test_a_rebuild_writes_the_rows_live_following_writes(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch, processes: int
) -> None:
    """Live pages of a few events go row by row (``INSERT … ON CONFLICT``); the rebuild's
    shared pass copies thousands at once, as do its worker processes. All must leave the same
    rows, every column."""
    apart = apart_in_small_chunks(monkeypatch)
    made = record(runtime, "t1", 2 * BULK_ROWS + 13) + record(runtime, "t2", BULK_ROWS // 2)
    models: list[Projection] = [FeedbackList(), AppraisalFacts(), Datasets()]
    live = {}
    for model in models:
        runner = ProjectionRunner(
            runtime.store, runtime.pool, model, schema=f"live_{model.name}", batch_size=37
        )
        await runner.start()
        await runner.catch_up()
        live[model.name] = runner.schema
    rebuilt = await rebuild_many(
        runtime.store,
        runtime.pool,
        models,
        swap=False,
        processes=processes,
        database_url=runtime.database_url,
    )
    assert gc.isenabled()  # the collector, paused for the shared pass, is back on
    assert apart == ([] if processes == 1 else [{}])  # loaded apart, and nothing failed
    head = runtime.store.recorder.max_notification_id()
    for model, schema in zip(models, rebuilt, strict=True):
        expected = await rows(runtime, model.name, live[model.name])
        assert expected  # every model has rows to compare
        assert await rows(runtime, model.name, schema) == expected, model.name
        assert await read_position(runtime.pool, schema) == head
        keys = await indexes(runtime, live[model.name])
        assert await indexes(runtime, schema) == keys, model.name
        assert any("feedback_pkey: CREATE UNIQUE INDEX" in key for key in keys) or (
            model.name == "datasets"
        )
    # And the feedback list's rows hold each event's own fields, in their columns.
    (listed,) = [s for m, s in zip(models, rebuilt, strict=True) if m.name == "feedback_list"]
    stored = sorted(row[:-1] for row in await rows(runtime, "feedback_list", listed))
    assert stored == sorted(
        (
            f.id, f.tenant_id, f.project_id, f.subject_kind, f.subject_ref, f.kind, f.rating,
            f.comment_ref, f.corrected_artifact_ref, f.given_by, f.created_on,
            f.trace_id, f.span_id, json.dumps(f.gen_ai) if f.gen_ai else None,
        )
        for f in made
    )  # fmt: skip


@PROCESSES
async def test_an_event_that_cannot_be_decoded_fails_only_the_readers_of_its_topic(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch, processes: int
) -> None:
    """The shared pass decodes each page once for every read model; an event it cannot
    decode fails the page of each read model that reads it (which goes on alone and parks
    the event), never of one that does not (the inbox reads no feedback). Loaded apart, the
    read model is built afresh on its own follower, which parks the event the same way."""
    apart = apart_in_small_chunks(monkeypatch)
    made = record(runtime, "t1", BULK_ROWS + 20)
    bad = made[BULK_ROWS // 2]
    async with runtime.pool.acquire() as conn:
        await conn.execute(
            f"UPDATE {EVENTS_TABLE} SET state = 'not json'::bytea WHERE originator_id = $1",
            bad.id,
        )
    rebuilt = await rebuild_many(
        runtime.store,
        runtime.pool,
        [FeedbackList(), Inbox()],
        swap=False,
        processes=processes,
        database_url=runtime.database_url,
    )
    assert gc.isenabled()
    if processes > 1:  # the feedback list's events failed apart, and it went on alone
        assert [list(failed) for failed in apart] == [[rebuilt[0]]]
    listed = await rows(runtime, "feedback_list", rebuilt[0])
    assert len(listed) == len(made) - 1
    assert bad.id not in {row[0] for row in listed}
    parked = await list_parked(runtime.pool, rebuilt[0])
    assert [p.originator_id for p in parked] == [bad.id]
    assert await list_parked(runtime.pool, rebuilt[1]) == []
    head = runtime.store.recorder.max_notification_id()
    for schema in rebuilt:
        assert await read_position(runtime.pool, schema) == head


async def test_a_key_added_back_keeps_the_first_row_of_a_value_loaded_twice(
    runtime: Runtime,
) -> None:
    """An insert-only table is loaded without its key (``Key.drop``), every write copied in
    whatever its count (``UNKEYED``); adding the key back leaves one row a key, the first
    written, as ``ON CONFLICT DO NOTHING`` would have."""
    await runtime.pool.execute(
        "DROP SCHEMA IF EXISTS keyed CASCADE; CREATE SCHEMA keyed; "
        "CREATE TABLE keyed.t (k text PRIMARY KEY, v integer NOT NULL)"
    )
    async with runtime.pool.acquire() as conn:
        keys = await Key.drop(conn, "keyed", ["t"])
        assert [(k.table, k.name, k.columns) for k in keys] == [("keyed.t", "t_pkey", "k")]
        UNKEYED.set(frozenset({"keyed.t"}))
        # Fewer than BULK_ROWS: without the key, ON CONFLICT (k) would be refused.
        await insert_rows(conn, "keyed.t", ("k", "v"), [("a", 1), ("b", 2)], conflict="(k)")
        await insert_rows(conn, "keyed.t", ("k", "v"), [("a", 3), ("c", 4)], conflict="(k)")
        UNKEYED.set(frozenset())
    for key in keys:
        await key.add(runtime.pool)
    async with runtime.pool.acquire() as conn:
        assert await conn.fetch("SELECT k, v FROM keyed.t ORDER BY k") == [
            ("a", 1), ("b", 2), ("c", 4)
        ]  # fmt: skip
        with_key = "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 't_pkey'"
        assert await conn.fetchval(with_key) == "PRIMARY KEY (k)"
        await conn.execute("DROP SCHEMA keyed CASCADE")


async def test_a_worker_process_killed_mid_rebuild_fails_it_and_the_next_rebuild_is_whole(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kill -9`` of a worker loading feedback apart: the rebuild fails (the pool is broken)
    instead of waiting for chunks that will never come, nothing is swapped in, and the next
    rebuild starts afresh and loads every row once."""
    made = record(runtime, "t1", 5000)
    monkeypatch.setattr(services.projecting.apart, "CHUNK", 50)
    told = Reached.apart
    killed: list[int] = []

    def kill_once(reached: Reached, covered: int) -> None:
        if not killed:  # as the first chunk comes back, the others still to load
            victim = multiprocessing.active_children()[0]
            os.kill(victim.pid or 0, signal.SIGKILL)
            killed.append(victim.pid or 0)
        told(reached, covered)

    monkeypatch.setattr(Reached, "apart", kill_once)
    models: list[Projection] = [FeedbackList()]
    with pytest.raises(ExceptionGroup) as failed:
        await rebuild_many(
            runtime.store, runtime.pool, models, processes=2, database_url=runtime.database_url
        )
    assert failed.value.subgroup(BrokenProcessPool) is not None
    assert killed
    fresh = await runtime.pool.fetchval("SELECT to_regclass('rm_feedback_list__rebuild.feedback')")
    assert fresh is not None  # not swapped in

    monkeypatch.setattr(Reached, "apart", told)
    [schema] = await rebuild_many(
        runtime.store, runtime.pool, models, processes=2, database_url=runtime.database_url
    )
    listed = await rows(runtime, "feedback_list", schema)
    assert sorted(row[0] for row in listed) == sorted(f.id for f in made)
