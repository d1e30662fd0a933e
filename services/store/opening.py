"""Opening the event store: the library's settings for a database URL, the checks it must pass
at start-up, and the tables and function it needs (created on first use)."""

import os
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from eventsourcing.utils import get_topic

from services.store.appending import ensure_append_function
from services.store.columns_recorder import ColumnsRecorder
from services.store.event_store import EventStore
from services.store.master_keys import MasterKeys
from services.store.master_keys_check import check_master_keys
from services.store.owners import ensure_tenants_table


class StoreMisconfigured(RuntimeError):
    pass


def postgres_env(database_url: str) -> dict[str, str]:
    """The library's settings for a ``postgresql://`` URL (a ``?host=`` socket dir is allowed)."""
    url = urlsplit(database_url)
    if url.scheme not in {"postgres", "postgresql"}:
        raise StoreMisconfigured(f"DATABASE_URL must be postgresql://…, not {url.scheme}://")
    query = parse_qs(url.query)
    host = query.get("host", [url.hostname or "localhost"])[0]
    return {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_HOST": host,
        "POSTGRES_PORT": str(url.port or query.get("port", ["5432"])[0]),
        "POSTGRES_USER": unquote(url.username or "postgres"),
        "POSTGRES_PASSWORD": unquote(url.password or ""),
        "POSTGRES_DBNAME": (url.path or "/postgres").lstrip("/") or "postgres",
        "POSTGRES_POOL_SIZE": "4",
        "POSTGRES_MAX_OVERFLOW": "8",
        # ARCHITECTURE: with DB functions on, a reader tailing the log under concurrent
        # writers misses events (the insert function skips the table lock). Keep it off.
        "POSTGRES_ENABLE_DB_FUNCTIONS": "n",
        "PROCESS_RECORDER_TOPIC": get_topic(ColumnsRecorder),
    }


def open_store(
    database_url: str, master_keys: MasterKeys | None = None, **overrides: Any
) -> EventStore:
    """Open (and on first use create) the event store, refusing DB functions. ``master_keys``
    wrap the data keys personal data is sealed under (by default the development key); they
    must open every data key there is (``MasterKeysRefused`` otherwise)."""
    from_env = os.environ.get("POSTGRES_ENABLE_DB_FUNCTIONS", "").strip().lower()
    if from_env in {"y", "yes", "t", "true", "on", "1"}:
        raise StoreMisconfigured(
            "POSTGRES_ENABLE_DB_FUNCTIONS is set: refused, because a reader tailing the "
            "notification log under concurrent writers would miss events"
        )
    store = EventStore(env={**postgres_env(database_url), **overrides})
    recorder = store.recorder
    datastore = getattr(recorder, "datastore", None)
    if datastore is None or datastore.enable_db_functions:
        raise StoreMisconfigured("the event store must run on PostgreSQL without DB functions")
    if store.mapper.compressor is not None or store.mapper.cipher is not None:
        # The owners' table reads the tenant from the first event's JSON (ensure_tenants_table).
        raise StoreMisconfigured("the event store's events must be stored as plain JSON")
    assert isinstance(recorder, ColumnsRecorder), "PROCESS_RECORDER_TOPIC names it"
    ensure_tenants_table(store)
    if master_keys is not None:
        store.data_keys.masters = master_keys
    if overrides.get("CREATE_TABLE", "y") != "n":  # not a rebuild's worker: its parent checked
        store.data_keys.ensure_tables()
        # Decisions D141: a process that could not open some person's data refuses to start.
        try:
            check_master_keys(datastore.get_connection, store.data_keys.masters)
        except BaseException:
            store.close()
            raise
    ensure_append_function(recorder, recorder.events_table_name, recorder.channel_name)
    return store
