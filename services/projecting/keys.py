"""What a rebuild drops before loading a read model's tables and builds after: primary keys
of its insert-only tables (``Key``) and its secondary indexes (``built``)."""

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

from projections.read_model import Projection
from services.followers.reader import Connection

log = logging.getLogger(__name__)

# Memory for each of a rebuild's index builds: enough that a large table's index sorts in
# memory rather than spilling to disk at PostgreSQL's default (64 MB). A rebuild builds its
# indexes side by side, a read model's several at once.
INDEX_MEMORY = "256MB"


@dataclass(frozen=True)
class Key:
    """A primary key a rebuild drops before loading its table and adds back after."""

    table: str  # schema.table
    name: str
    columns: str  # comma-separated

    @classmethod
    async def drop(cls, conn: Connection, schema: str, tables: Sequence[str]) -> list["Key"]:
        """Drop the primary keys of ``tables`` (of ``schema``); returns them, to add back."""
        keys = []
        for table in (f"{schema}.{name}" for name in tables):
            row = await conn.fetchrow(
                "SELECT c.conname, (SELECT string_agg(quote_ident(a.attname), ', ' "
                "ORDER BY k.n) FROM unnest(c.conkey) WITH ORDINALITY k(attnum, n) "
                "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum) "
                "FROM pg_constraint c WHERE c.contype = 'p' AND c.conrelid = $1::regclass",
                table,
            )
            if row is not None:
                await conn.execute(f"ALTER TABLE {table} DROP CONSTRAINT {row[0]}")
                keys.append(cls(table, *row))
        return keys

    async def add(self, pool: asyncpg.Pool) -> None:
        """Add the key back: its index built first (beside the table's other indexes, which
        a unique index does not lock out), then made the key.

        Should a value be there twice (which an insert-only table, keyed by the id of the
        event that made the row, never holds), the rows after the first in the table's order
        go, as ``ON CONFLICT DO NOTHING`` would have kept the first written."""
        build = f"CREATE UNIQUE INDEX {self.name} ON {self.table} ({self.columns})"
        try:
            await built(pool, build)
        except asyncpg.UniqueViolationError:
            log.warning("%s: a key's value loaded twice; keeping its first row", self.table)
            await pool.execute(
                f"DELETE FROM {self.table} t USING (SELECT ctid, row_number() OVER "
                f"(PARTITION BY {self.columns} ORDER BY ctid) AS n FROM {self.table}) d "
                "WHERE t.ctid = d.ctid AND d.n > 1"
            )
            await built(pool, build)
        await pool.execute(
            f"ALTER TABLE {self.table} ADD CONSTRAINT {self.name} "
            f"PRIMARY KEY USING INDEX {self.name}"
        )


async def built(pool: asyncpg.Pool, statement: str) -> None:
    """Run an index-building statement with ``INDEX_MEMORY`` to sort in."""
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(f"SET LOCAL maintenance_work_mem = '{INDEX_MEMORY}'")
        await conn.execute(statement)


def statements(sql: str) -> list[str]:
    """The statements of DDL text (ours: no semicolon inside one)."""
    return [statement for part in sql.split(";") if (statement := part.strip())]


def insert_only_of(projection: Projection) -> tuple[str, ...]:
    tables: tuple[str, ...] = getattr(projection, "insert_only", ())
    return tables
