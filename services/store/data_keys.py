"""The data keys that personal data in events is sealed under, wrapped by a master key.

Envelope encryption (decisions D42): each person of a tenant has data keys of their own
(AES-256-GCM), kept in ``feedbackloop_data_keys`` wrapped by a master key (AES key wrap,
RFC 3394) that only the settings hold (``services.store.master_keys``). A key has a scope:
``""`` for what is kept as long as the person is not erased, or a month (``2026-12``) for
text a tenant's retention may erase (decisions D45). Destroying a key row is erasure: every
value sealed under it becomes unreadable, in the log and in every copy of the log, while the
events themselves stay.

``feedbackloop_data_key_bindings`` says which key an aggregate's later events are sealed
under (a report's hand-over names no person: its draft did). Ids only, nothing personal.

Keys are cached per process (``DataKeys``): the erasing process forgets the keys at once;
every other process learns of an erasure before it decodes the next page of the log it reads
(``refresh``, called by ``read_log``), and on any other read within ``CACHE_SECONDS``
(decisions D42, D221). ``generation`` counts the keys a process has forgotten, so that what
is cached from a key (the mapper's ciphers) is dropped with it.
"""

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from uuid import UUID, uuid4

from cryptography.hazmat.primitives.keywrap import aes_key_wrap
from psycopg.rows import tuple_row

from services.store.master_keys import MasterKeys, master_id

KEYS_TABLE = "feedbackloop_data_keys"
BINDINGS_TABLE = "feedbackloop_data_key_bindings"
ERASURES_TABLE = "feedbackloop_data_key_erasures"
CACHE_SECONDS = 1.0  # decisions D221: 5 s before

DDL = f"""
CREATE TABLE IF NOT EXISTS {KEYS_TABLE} (
    key_id uuid PRIMARY KEY,
    tenant_id text NOT NULL,
    person text NOT NULL,
    scope text NOT NULL,
    master text NOT NULL,
    wrapped bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, person, scope)
);
CREATE TABLE IF NOT EXISTS {BINDINGS_TABLE} (
    aggregate_id uuid PRIMARY KEY,
    key_id uuid NOT NULL REFERENCES {KEYS_TABLE} (key_id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS {BINDINGS_TABLE}_key ON {BINDINGS_TABLE} (key_id);
CREATE TABLE IF NOT EXISTS {ERASURES_TABLE} (
    seq bigserial PRIMARY KEY,
    key_id uuid NOT NULL,
    erased_at timestamptz NOT NULL DEFAULT now()
);
"""


@dataclass(frozen=True)
class DataKey:
    key_id: UUID
    key: bytes


class DataKeys:
    """The data keys of one database, as the event store's mapper asks for them.

    A process loads every key once, on its first need (one query; a rebuild would otherwise
    ask once per person), then only the keys made since, one at a time. A destroyed key is
    written to ``feedbackloop_data_key_erasures`` too, which every process reads at most every
    ``CACHE_SECONDS`` (one small query) to forget it: nothing else expires."""

    def __init__(self, datastore: Callable[[], Any], masters: MasterKeys) -> None:
        self._datastore = datastore
        self.masters = masters
        self._by_id: dict[UUID, bytes | None] = {}
        self._by_owner: dict[tuple[str, str, str], DataKey] = {}
        self._by_aggregate: dict[UUID, UUID] = {}
        self._loaded = False
        self._erasures_seen = 0
        self._checked = -CACHE_SECONDS
        self._lock = threading.Lock()
        self.generation = 0  # keys forgotten so far: a change empties what is cached of them

    def _connection(self) -> Any:
        """A connection of the store's own pool, in autocommit: each statement commits."""
        return self._datastore().get_connection()

    def ensure_tables(self) -> None:
        with self._connection() as conn:
            conn.execute("SELECT pg_advisory_lock(hashtext('feedbackloop_data_keys'))")
            try:
                conn.execute(DDL)
            finally:
                conn.execute("SELECT pg_advisory_unlock(hashtext('feedbackloop_data_keys'))")

    def refresh(self) -> None:
        """Keys destroyed elsewhere forgotten now (one small query): a reader of the log calls
        it before decoding each page it read, so that no page read after an erasure commits is
        opened with a key cached before it (decisions D221)."""
        self._fresh(now=True)

    def _fresh(self, now: bool = False) -> None:
        """Every key loaded once; keys destroyed elsewhere since the last look forgotten."""
        at = time.monotonic()
        if self._loaded and not now and at - self._checked < CACHE_SECONDS:
            return
        with self._lock, self._connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
            curs.execute(
                f"SELECT seq, key_id FROM {ERASURES_TABLE} WHERE seq > %s ORDER BY seq",
                (self._erasures_seen,),
            )
            for seq, key_id in curs.fetchall():
                self._erasures_seen = seq
                self._drop(key_id)
            if not self._loaded:
                curs.execute(
                    f"SELECT key_id, tenant_id, person, scope, master, wrapped FROM {KEYS_TABLE}"
                )
                for key_id, tenant, person, scope, master, wrapped in curs.fetchall():
                    key = DataKey(key_id, self.masters.unwrap(master, bytes(wrapped)))
                    self._by_id[key_id] = key.key
                    self._by_owner[(tenant, person, scope)] = key
                curs.execute(f"SELECT aggregate_id, key_id FROM {BINDINGS_TABLE}")
                self._by_aggregate.update(curs.fetchall())
                self._loaded = True
            self._checked = at

    def current_generation(self) -> int:
        """How many keys this process has forgotten, once it has looked for erasures if due."""
        self._fresh()
        return self.generation

    def key_for(self, tenant_id: str, person: str, scope: str) -> DataKey:
        """The person's key of this scope, made on first use."""
        self._fresh()
        cached = self._by_owner.get((tenant_id, person, scope))
        if cached is not None:
            return cached
        self.make([(tenant_id, person, scope)])
        return self._by_owner[(tenant_id, person, scope)]

    def held_key(self, tenant_id: str, person: str, scope: str) -> DataKey | None:
        """The person's key of this scope if this process holds it: no query, nothing made."""
        self._fresh()
        return self._by_owner.get((tenant_id, person, scope))

    def make(self, owners: Iterable[tuple[str, str, str]]) -> None:
        """The keys of these owners (tenant, person, scope) that are not there yet, made in
        one statement and one commit: a batch of commands by new people waits on one commit,
        not two round trips each (decisions D220). Sorted, so that two processes making the
        same keys take their rows in one order."""
        self._fresh()
        missing = sorted({owner for owner in owners if owner not in self._by_owner})
        if not missing:
            return
        current = self.masters.current
        made = [(uuid4(), aes_key_wrap(current, os.urandom(32))) for _ in missing]
        tenants, people, scopes = (list(column) for column in zip(*missing, strict=True))
        with self._connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
            curs.execute(
                f"INSERT INTO {KEYS_TABLE} (key_id, tenant_id, person, scope, master, wrapped) "
                "SELECT k, t, p, s, %s, w FROM unnest(%s::uuid[], %s::text[], %s::text[], "
                "%s::text[], %s::bytea[]) AS made (k, t, p, s, w) "
                "ON CONFLICT (tenant_id, person, scope) DO NOTHING",
                (master_id(current), [k for k, _ in made], tenants, people, scopes,
                 [w for _, w in made]),
            )  # fmt: skip
            curs.execute(
                f"SELECT key_id, tenant_id, person, scope, master, wrapped FROM {KEYS_TABLE} "
                "WHERE (tenant_id, person, scope) IN "
                "(SELECT * FROM unnest(%s::text[], %s::text[], %s::text[]))",
                (tenants, people, scopes),
            )
            rows = curs.fetchall()
        with self._lock:
            for key_id, tenant, person, scope, master, wrapped in rows:
                key = DataKey(key_id, self.masters.unwrap(master, bytes(wrapped)))
                self._by_owner[(tenant, person, scope)] = key
                self._by_id[key_id] = key.key

    def bind(self, aggregate_id: UUID, key_id: UUID) -> None:
        """Later events of this aggregate are sealed under this key (they name no person)."""
        if self._by_aggregate.get(aggregate_id) == key_id:
            return
        with self._connection() as conn:
            conn.execute(
                f"INSERT INTO {BINDINGS_TABLE} (aggregate_id, key_id) VALUES (%s, %s) "
                "ON CONFLICT DO NOTHING",
                (aggregate_id, key_id),
            )
        with self._lock:
            self._by_aggregate[aggregate_id] = key_id

    def bound_key(self, aggregate_id: UUID) -> DataKey | None:
        """The key an aggregate's earlier event was sealed under, if any (and not destroyed)."""
        self._fresh()
        key_id = self._by_aggregate.get(aggregate_id)
        if key_id is None:  # bound since the load, or never (an aggregate older than sealing)
            with self._connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
                curs.execute(
                    f"SELECT key_id FROM {BINDINGS_TABLE} WHERE aggregate_id = %s",
                    (aggregate_id,),
                )
                row = curs.fetchone()
            if row is None:
                return None
            key_id = self._by_aggregate[aggregate_id] = row[0]
        key = self.key(key_id)
        return None if key is None else DataKey(key_id, key)

    def key(self, key_id: UUID) -> bytes | None:
        """The data key itself, or None once destroyed."""
        self._fresh()
        if key_id in self._by_id:
            return self._by_id[key_id]
        with self._connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
            curs.execute(f"SELECT master, wrapped FROM {KEYS_TABLE} WHERE key_id = %s", (key_id,))
            row = curs.fetchone()
        key = None if row is None else self.masters.unwrap(row[0], bytes(row[1]))
        with self._lock:
            self._by_id[key_id] = key
        return key

    def person_keys(self, tenant_id: str, person: str) -> list[UUID]:
        with self._connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
            curs.execute(
                f"SELECT key_id FROM {KEYS_TABLE} WHERE tenant_id = %s AND person = %s",
                (tenant_id, person),
            )
            return [key_id for (key_id,) in curs.fetchall()]

    def destroy_person(self, tenant_id: str, person: str) -> list[UUID]:
        """Erasure: every key of the person in this tenant destroyed. Answers their ids."""
        return self._destroy("tenant_id = %s AND person = %s", (tenant_id, person))

    def destroy_scopes_before(self, tenant_id: str, scope: str) -> list[UUID]:
        """Retention: every dated key of the tenant for a month before ``scope`` destroyed."""
        return self._destroy("tenant_id = %s AND scope <> '' AND scope < %s", (tenant_id, scope))

    def _destroy(self, where: str, arguments: tuple[str, str]) -> list[UUID]:
        """The keys deleted and their ids written to the erasures, in one transaction."""
        statement = (
            f"WITH gone AS (DELETE FROM {KEYS_TABLE} WHERE {where} RETURNING key_id) "
            f"INSERT INTO {ERASURES_TABLE} (key_id) SELECT key_id FROM gone RETURNING key_id"
        )
        with self._connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
            curs.execute(statement, arguments)
            destroyed = [key_id for (key_id,) in curs.fetchall()]
        with self._lock:
            for key_id in destroyed:
                self._drop(key_id)
        return destroyed

    def rewrap(self) -> int:
        """Key rotation: every data key wrapped by another master key wrapped again by the
        current one. The data keys, and so the log, stay as they are. Answers how many."""
        current = master_id(self.masters.current)
        done = 0
        with self._connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
            curs.execute(
                f"SELECT key_id, master, wrapped FROM {KEYS_TABLE} WHERE master <> %s", (current,)
            )
            for key_id, master, wrapped in curs.fetchall():
                key = self.masters.unwrap(master, bytes(wrapped))
                curs.execute(
                    f"UPDATE {KEYS_TABLE} SET master = %s, wrapped = %s WHERE key_id = %s",
                    (current, aes_key_wrap(self.masters.current, key), key_id),
                )
                done += 1
        return done

    def _drop(self, key_id: UUID) -> None:
        """Forget a destroyed key (the caller holds the lock)."""
        self.generation += 1
        self._by_id[key_id] = None
        for owner in [o for o, k in self._by_owner.items() if k.key_id == key_id]:
            del self._by_owner[owner]
        for aggregate in [a for a, k in self._by_aggregate.items() if k == key_id]:
            del self._by_aggregate[aggregate]
