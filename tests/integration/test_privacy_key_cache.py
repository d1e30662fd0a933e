"""What a process caches of the data keys (decisions D220–D222), on a real PostgreSQL: an
erasure committed by one process reaches the next page another process reads, with no wait,
though that process opened the person's words a moment before from its cache; a batch's new
people get their keys in one statement, the same keys another process makes for them; a
rotation of the master keys leaves a warm cache opening the log; and a changed box is still an
incident (decisions D142, D145) once the cache holds its key."""

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from uuid import uuid4

import pytest

from services.reports.domain import Report
from services.store.data_keys import KEYS_TABLE
from services.store.event_store import EVENTS_TABLE, EventStore
from services.store.log_reading import read_log
from services.store.master_keys import MasterKeys
from services.store.opening import open_store
from services.store.sealing import ERASED, BrokenSeal, is_sealed, month_of

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]
MASTERS = MasterKeys()
ROOT = Path(__file__).resolve().parents[2]


def drafted(reporter: str, message: str) -> Report.Drafted:
    return Report.Drafted(
        originator_id=uuid4(), originator_version=1, timestamp=datetime.now(UTC),
        originator_topic="services.reports.domain:Report", tenant_id="t1", reporter=reporter,
        category="answer", message=message, thread=None, message_ref=None,
        extra_context=None, command_id="c1", prompt=None, context=[], facts=None,
    )  # fmt: skip


def messages(store: EventStore) -> list[str]:
    """Every draft's message, as a reader of the log (a follower, a rebuild) reads it."""
    topics = ["services.reports.domain:Report.Drafted"]
    _, page = read_log(store, 0, 100, topics)
    return [store.mapper.to_domain_event(n).message for n in page]  # type: ignore[attr-defined]


def written(store: EventStore, *events: Report.Drafted) -> None:
    store.recorder.insert_events(store.mapper.to_stored_events(events))  # type: ignore[attr-defined]


def test_an_erasure_reaches_another_store_s_next_page_at_once(database_url: str) -> None:
    writer, reader = open_store(database_url, MASTERS), open_store(database_url, MASTERS)
    try:
        written(writer, drafted("pat", "pat's words"), drafted("kim", "kim's words"))
        assert messages(reader) == ["pat's words", "kim's words"]  # the reader's cache is warm

        assert writer.data_keys.destroy_person("t1", "pat")

        # No wait: the reader looks at the erasures before it decodes the page (D221).
        assert messages(reader) == [ERASED, "kim's words"]
    finally:
        writer.close()
        reader.close()


READER = """
import sys
from services.store.master_keys import MasterKeys
from services.store.opening import open_store
from tests.integration.test_privacy_key_cache import messages
store = open_store(sys.argv[1], MasterKeys())
for line in sys.stdin:
    print("|".join(messages(store)), flush=True)
"""


def test_an_erasure_reaches_another_process_s_next_page_at_once(database_url: str) -> None:
    """The same across processes: the reader is a process of its own, its cache warm."""
    writer = open_store(database_url, MASTERS)
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, database_url],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert reader.stdin is not None
    assert reader.stdout is not None
    try:
        written(writer, drafted("pat", "pat's words"), drafted("kim", "kim's words"))

        def read() -> str:
            reader.stdin.write("read\n")  # type: ignore[union-attr]
            reader.stdin.flush()  # type: ignore[union-attr]
            return reader.stdout.readline().strip()  # type: ignore[union-attr]

        assert read() == "pat's words|kim's words"
        assert writer.data_keys.destroy_person("t1", "pat")
        assert read() == f"{ERASED}|kim's words"
    finally:
        reader.stdin.close()
        reader.wait(timeout=30)
        reader.stdout.close()
        writer.close()


def test_a_batch_of_new_people_gets_its_keys_in_one_statement(database_url: str) -> None:
    one, other = open_store(database_url, MASTERS), open_store(database_url, MASTERS)
    try:
        events = [drafted(person, f"{person}'s words") for person in ("ann", "bo", "cy", "ann")]
        written(one, *events)
        month = month_of(events[0].timestamp)  # a draft's words are dated (decisions D45)
        (ann,) = one.data_keys.person_keys("t1", "ann")  # ann's two drafts, one key

        # Another process making the same people's keys gets the same keys, not new ones.
        other.data_keys.make([("t1", "ann", month), ("t1", "bo", month), ("t1", "dee", month)])
        assert other.data_keys.key_for("t1", "ann", month).key_id == ann
        with one.recorder.datastore.get_connection() as conn:  # type: ignore[attr-defined]
            row = conn.execute(f"SELECT count(*) AS n FROM {KEYS_TABLE}").fetchone()
        assert row["n"] == 4  # ann, bo, cy, dee
        assert messages(other) == [event.message for event in events]
    finally:
        one.close()
        other.close()


def test_a_warm_cache_opens_the_log_through_a_rotation(database_url: str) -> None:
    old, new = MasterKeys((bytes(range(32)),)), MasterKeys((bytes(range(1, 33)),))
    both = MasterKeys(new.keys + old.keys)
    writer = open_store(database_url, old)
    written(writer, drafted("pat", "before the rotation"))
    writer.close()
    reader, rotating = open_store(database_url, both), open_store(database_url, both)
    try:
        assert messages(reader) == ["before the rotation"]  # pat's key cached, unwrapped by old
        assert rotating.data_keys.rewrap() == 1
        written(reader, drafted("kim", "kim's words"))  # a key made after: wrapped by new
        assert messages(reader) == ["before the rotation", "kim's words"]
        fresh = open_store(database_url, new)  # the old master key gone from the settings
        try:
            assert messages(fresh) == ["before the rotation", "kim's words"]
        finally:
            fresh.close()
    finally:
        reader.close()
        rotating.close()


def test_a_changed_box_is_an_incident_though_its_key_is_cached(database_url: str) -> None:
    store = open_store(database_url, MASTERS)
    try:
        first, second = drafted("pat", "pat's words"), drafted("pat", "more words")
        written(store, first, second)
        assert messages(store) == ["pat's words", "more words"]  # pat's key cached
        with store.recorder.datastore.get_connection() as conn:  # type: ignore[attr-defined]
            row = conn.execute(
                f"SELECT state FROM {EVENTS_TABLE} WHERE originator_id = %s",
                (second.originator_id,),
            ).fetchone()
            state = json.loads(bytes(row["state"]))
            assert is_sealed(state["message"])
            box = state["message"]["box"]
            state["message"]["box"] = box[:20] + ("A" if box[20] != "A" else "B") + box[21:]
            conn.execute(
                f"UPDATE {EVENTS_TABLE} SET state = %s WHERE originator_id = %s",
                (json.dumps(state).encode(), second.originator_id),
            )
        with pytest.raises(BrokenSeal, match="fails authentication"):
            messages(store)
    finally:
        store.close()
