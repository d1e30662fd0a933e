"""How the store appends: events as column arrays, owners by a statement trigger."""

import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pytest
from eventsourcing.persistence import IntegrityError, StoredEvent, Tracking
from psycopg.pq import TransactionStatus

from services.store.columns_recorder import ColumnsRecorder
from services.store.event_store import EVENTS_TABLE
from services.store.opening import open_store
from services.store.owners import TENANTS_TABLE, ensure_tenants_table, owned


def stored(originator_id: uuid.UUID, version: int, tenant: str | None) -> StoredEvent:
    state = b"{}" if tenant is None else f'{{"tenant_id": "{tenant}"}}'.encode()
    return StoredEvent(originator_id, version, "tests:Happened", state)


def test_an_append_gets_its_notification_ids_in_order_and_one_conflict_fails_it_whole(
    database_url: str,
) -> None:
    store = open_store(database_url)
    try:
        assert isinstance(store.recorder, ColumnsRecorder)
        ids = [uuid.uuid4() for _ in range(300)]
        events = [stored(i, 1, "t") for i in ids]
        positions = store.recorder.insert_events(events)
        assert positions is not None
        assert len(positions) == 300
        assert positions == sorted(positions)
        read = store.recorder.select_notifications(start=1, limit=1000)
        assert [(n.id, n.originator_id) for n in read] == list(zip(positions, ids, strict=True))
        again = [stored(uuid.uuid4(), 1, "t"), stored(ids[0], 1, "t")]
        with pytest.raises(IntegrityError):  # a second version 1 of an aggregate
            store.recorder.insert_events(again)
        assert len(store.recorder.select_notifications(start=1, limit=1000)) == 300
    finally:
        store.close()


def test_the_owners_of_a_whole_append_are_listed_by_one_statement_trigger(
    database_url: str,
) -> None:
    store = open_store(database_url)
    datastore = store.recorder.datastore  # type: ignore[attr-defined]
    try:
        mine, theirs, nobody = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
        store.recorder.insert_events(
            [
                stored(mine, 1, "a"),
                stored(mine, 2, "b"),
                stored(theirs, 1, "b"),
                stored(nobody, 1, None),
            ]
        )
        assert owned(store, "a", mine)
        assert not owned(store, "b", mine)
        assert owned(store, "b", theirs)
        with datastore.transaction(commit=False) as curs:
            curs.execute(f"SELECT count(*) AS n FROM {TENANTS_TABLE}")
            assert curs.fetchone()["n"] == 2  # nothing without a tenant is listed
            assert_one_statement_trigger(curs)
    finally:
        store.close()


def assert_one_statement_trigger(curs: Any) -> None:
    """The tenant trigger is there once, and fires per statement, not per row."""
    curs.execute(
        "SELECT tgtype & 1 AS per_row FROM pg_trigger WHERE tgname = 'feedbackloop_record_tenant'"
    )
    assert [r["per_row"] for r in curs.fetchall()] == [0]


def test_a_row_trigger_of_an_older_store_is_replaced_and_its_owners_kept(database_url: str) -> None:
    store = open_store(database_url)
    datastore = store.recorder.datastore  # type: ignore[attr-defined]
    try:
        before = uuid.uuid4()
        with datastore.transaction(commit=True) as curs:  # as a store made before the column arrays
            curs.execute(f"DROP TRIGGER feedbackloop_record_tenant ON {EVENTS_TABLE}")
            curs.execute(
                "CREATE OR REPLACE FUNCTION feedbackloop_record_tenant() RETURNS trigger "
                "LANGUAGE plpgsql AS $$ BEGIN "
                f"INSERT INTO {TENANTS_TABLE} VALUES (NEW.originator_id, "
                "convert_from(NEW.state, 'UTF8')::json ->> 'tenant_id') ON CONFLICT DO NOTHING; "
                "RETURN NULL; END $$"
            )
            curs.execute(
                f"CREATE TRIGGER feedbackloop_record_tenant AFTER INSERT ON {EVENTS_TABLE} "
                "FOR EACH ROW WHEN (NEW.originator_version = 1) "
                "EXECUTE FUNCTION feedbackloop_record_tenant()"
            )
        store.recorder.insert_events([stored(before, 1, "old")])
        ensure_tenants_table(store)
        after = uuid.uuid4()
        store.recorder.insert_events([stored(after, 1, "new")])
        assert owned(store, "old", before)
        assert owned(store, "new", after)
        with datastore.transaction(commit=False) as curs:
            assert_one_statement_trigger(curs)
    finally:
        store.close()


def test_an_append_commits_in_its_round_trip_and_a_failed_one_leaves_its_connection_clean(
    database_url: str,
) -> None:
    """``ColumnsRecorder.insert_events`` sends BEGIN, the tracking record, the events and
    COMMIT together (the table lock is never held while the client thread waits). A conflict
    skips the rest, COMMIT included: nothing of it is stored, and the one pooled connection
    is ready for the next append."""
    store = open_store(database_url, POSTGRES_POOL_SIZE="1", POSTGRES_MAX_OVERFLOW="0")
    recorder = store.process_recorder
    try:
        first = uuid.uuid4()
        [position] = recorder.insert_events([stored(first, 1, "t")], tracking=Tracking("up", 7))
        assert recorder.max_tracking_id("up") == 7
        with pytest.raises(IntegrityError):  # the same upstream position again
            recorder.insert_events([stored(uuid.uuid4(), 1, "t")], tracking=Tracking("up", 7))
        with pytest.raises(IntegrityError):  # a second version 1, with a new position
            recorder.insert_events([stored(first, 1, "t")], tracking=Tracking("up", 8))
        assert recorder.max_tracking_id("up") == 7  # the failed append's record went with it
        [after] = recorder.insert_events([stored(first, 2, "t")], tracking=Tracking("up", 8))
        assert after > position
        assert recorder.max_tracking_id("up") == 8
        assert [n.originator_version for n in recorder.select_notifications(1, 10)] == [1, 2]
    finally:
        store.close()


def test_an_append_without_tracking_waits_for_the_table_lock_notifies_and_commits_alone(
    database_url: str,
) -> None:
    """Without a tracking record an append is one statement (``feedbackloop_append``): it
    waits behind a transaction holding the table lock, as a process of an older version
    takes it (commit order stays notification order), wakes the followers' LISTEN, and
    commits on its own."""
    store = open_store(database_url, POSTGRES_POOL_SIZE="1", POSTGRES_MAX_OVERFLOW="0")
    try:
        with (
            psycopg.connect(database_url, autocommit=True) as listener,
            psycopg.connect(database_url) as holder,
        ):
            listener.execute(f"LISTEN {EVENTS_TABLE}")
            holder.execute(f"LOCK TABLE {EVENTS_TABLE} IN EXCLUSIVE MODE")
            with ThreadPoolExecutor(1) as pool:
                appending = pool.submit(
                    store.recorder.insert_events, [stored(uuid.uuid4(), 1, "t")]
                )
                time.sleep(0.5)
                assert not appending.done()  # held back by the lock
                holder.rollback()
                [position] = appending.result(timeout=10) or []
            assert [n.channel for n in listener.notifies(timeout=5, stop_after=1)] == [EVENTS_TABLE]
        [read] = store.recorder.select_notifications(start=1, limit=10)
        assert read.id == position
        datastore = store.recorder.datastore  # type: ignore[attr-defined]
        with datastore.get_connection() as conn:  # the one pooled connection, idle
            assert conn.info.transaction_status == TransactionStatus.IDLE
    finally:
        store.close()


def test_the_append_function_is_written_once_not_again_by_every_process_that_opens_the_store(
    database_url: str,
) -> None:
    """Every process opens the store; only a function whose body differs from this version's
    is replaced (a replacement writes the catalogue and has every session plan it again)."""
    written = "SELECT xmin::text FROM pg_proc WHERE proname = 'feedbackloop_append'"
    with psycopg.connect(database_url, autocommit=True) as conn:
        open_store(database_url).close()
        first = conn.execute(written).fetchall()
        open_store(database_url).close()
        assert conn.execute(written).fetchall() == first  # the same row: not written again
        conn.execute(
            "CREATE OR REPLACE FUNCTION feedbackloop_append(ids uuid[], versions bigint[], "
            "topics text[], states bytea[], lock_timeout text) RETURNS SETOF bigint "
            "LANGUAGE plpgsql AS $$ BEGIN END $$"
        )  # as an older version might have written it
        store = open_store(database_url)
        try:
            assert conn.execute(written).fetchall() != first
            [position] = store.recorder.insert_events([stored(uuid.uuid4(), 1, "t")]) or []
            assert position > 0  # this version's body again: it inserts
        finally:
            store.close()


@pytest.mark.parametrize("tracked", [False, True], ids=["one statement", "with tracking"])
def test_an_append_never_waits_for_vacuum(database_url: str, tracked: bool) -> None:
    """VACUUM and ANALYZE (autovacuum's too) hold SHARE UPDATE EXCLUSIVE on the table they
    work on. The library's table lock conflicts with it: every append would wait for them,
    and autovacuum is cancelled after a second of appends waiting. The append lock
    (``APPEND_LOCK``) does not conflict with it."""
    store = open_store(database_url)
    tracking = {"tracking": Tracking("up", 1)} if tracked else {}
    try:
        with psycopg.connect(database_url) as vacuum, ThreadPoolExecutor(1) as pool:
            vacuum.execute(f"LOCK TABLE {EVENTS_TABLE} IN SHARE UPDATE EXCLUSIVE MODE")
            appending = pool.submit(
                store.recorder.insert_events, [stored(uuid.uuid4(), 1, "t")], **tracking
            )
            [position] = appending.result(timeout=10) or []
            vacuum.rollback()
        assert [n.id for n in store.recorder.select_notifications(1, 10)] == [position]
    finally:
        store.close()


@pytest.mark.parametrize("tracked", [False, True], ids=["one statement", "with tracking"])
def test_appends_take_turns_so_commit_order_is_notification_order(
    database_url: str, tracked: bool
) -> None:
    """An append in flight (its events inserted, not yet committed) holds the next one back
    until it commits: the later commit has the later positions, so a follower never passes
    a position that an append in flight will fill."""
    store = open_store(database_url)
    tracking = {"tracking": Tracking("up", 1)} if tracked else {}
    try:
        with psycopg.connect(database_url) as first, ThreadPoolExecutor(1) as pool:
            [[held]] = first.execute(
                "SELECT * FROM feedbackloop_append(%s, %s, %s, %s, '0s')",
                ([uuid.uuid4()], [1], ["tests:Happened"], [b'{"tenant_id": "t"}']),
            ).fetchall()
            appending = pool.submit(
                store.recorder.insert_events, [stored(uuid.uuid4(), 1, "t")], **tracking
            )
            time.sleep(0.5)
            assert not appending.done()  # waits for the append in flight
            first.commit()
            [after] = appending.result(timeout=10) or []
        assert held < after
    finally:
        store.close()
