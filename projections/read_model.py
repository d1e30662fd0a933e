"""What a read model is to the runtime, and how it writes its rows.

A read model declares its name, the events it reads, its tables' DDL and an ``apply`` of a
batch of positioned events; the machinery of ``services.projecting`` runs it live on the log
follower and rebuilds it, neither of which the read model needs to know about.
"""

import json
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any, Protocol

import asyncpg

from services.followers.reader import Connection, Positioned


class Projection(Protocol):
    name: str

    @property
    def handles(self) -> Sequence[str | type]:
        """The events it reads, by topic (``"services.feedback.domain:Feedback.Recorded"``)
        or by class (its topic is its module path and name); nothing else is fetched."""

    def ddl(self, schema: str) -> str: ...

    # Optional: ``insert_only``, the tables (names within the schema) its ``apply`` only ever
    # inserts into, through ``insert_rows``, and never reads, updates or deletes from; and
    # ``order_free``, the events (of ``handles``, named alike) its ``apply`` only turns into
    # rows of those tables, reading nothing: a rebuild may apply them in any order, in worker
    # processes (``services.projecting.apart``). And ``staged``, a ``Staging``: events its
    # ``apply`` takes in log order, but whose rows a rebuild's worker processes may make ahead.

    async def apply(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None: ...


class Staging(Protocol):
    """Events a read model applies in log order, of which what it takes needs nothing but the
    event itself: a rebuild's worker processes, decoding them anyway, ``stage`` them and send
    the items back; the shared pass hands those to the read model's ``apply``, in log order, in
    place of the events, which it never decodes. ``apply`` must take these items as it takes
    the events they were made of (decisions D70). A rebuild without worker processes hands
    ``apply`` the events themselves."""

    @property
    def handles(self) -> Sequence[str | type]:
        """The events it stages, named as ``Projection.handles`` names them."""

    def stage(self, batch: Sequence[Positioned]) -> list[Positioned]:
        """In a worker process, no I/O: what ``apply`` takes of ``batch``, each at its event's
        position (picklable: it goes back to the rebuild's process)."""
        ...


def schema_of(projection: Projection) -> str:
    return schema_named(projection.name)


def schema_named(name: str) -> str:
    """The schema of the read model called ``name``: ``rm_<name>``, its reader's name too."""
    return f"rm_{name}"


# From this many rows, a write goes through COPY: a catch-up's pages are thousands of rows,
# where COPY costs a fraction of inserting them row by row; a live batch is mostly a handful.
BULK_ROWS = 200

# The tables (``schema.table``) a rebuild is loading without their primary key: this task's
# writes to them are copied in whatever their count (no key, no conflict to look for).
UNKEYED: ContextVar[frozenset[str]] = ContextVar("unkeyed", default=frozenset())


async def insert_rows(
    conn: Connection,
    table: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    conflict: str,
) -> None:
    """``INSERT … ON CONFLICT {conflict} DO NOTHING`` of ``rows``, the same in effect however
    many there are.

    Many (``BULK_ROWS``) are copied straight into the table; if one of them is there already
    (its key taken), that copy is undone and they go through a staging table filled by COPY,
    then ``INSERT … SELECT … ON CONFLICT``: conflicts are rare (a read model's rows are made
    once), and copying straight in spares PostgreSQL writing every row twice.
    """
    if not rows:
        return
    names = ", ".join(columns)
    if table in UNKEYED.get():
        schema, _, name = table.rpartition(".")
        await conn.copy_records_to_table(
            name, schema_name=schema, records=rows, columns=list(columns)
        )
        return
    if len(rows) < BULK_ROWS:
        values = ", ".join(f"${i}" for i in range(1, len(columns) + 1))
        await conn.executemany(
            f"INSERT INTO {table} ({names}) VALUES ({values}) ON CONFLICT {conflict} DO NOTHING",
            rows,
        )
        return
    try:
        async with conn.transaction():  # a savepoint inside the follower's transaction
            schema, _, name = table.rpartition(".")
            await conn.copy_records_to_table(
                name, schema_name=schema or None, records=rows, columns=list(columns)
            )
        return
    except asyncpg.UniqueViolationError:
        pass
    stage = "stage_" + table.replace(".", "_")
    async with conn.transaction():
        await conn.execute(
            f"CREATE TEMP TABLE IF NOT EXISTS {stage} "
            f"(LIKE {table} INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"
        )
        await conn.execute(f"TRUNCATE {stage}")
        await conn.copy_records_to_table(stage, records=rows, columns=list(columns))
        await conn.execute(
            f"INSERT INTO {table} ({names}) SELECT {names} FROM {stage} "
            f"ON CONFLICT {conflict} DO NOTHING"
        )


def attributes_json(event: Any) -> str | None:
    """The event's GenAI attributes as jsonb's text (asyncpg's codec takes text), or None."""
    attributes = getattr(event, "gen_ai", None)  # events older than trace links have none
    return json.dumps(attributes, sort_keys=True) if attributes else None
