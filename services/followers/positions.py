"""Where each reader of the log stands: one row per reader in ``reader_positions``, moved
forward only (``services.followers.moving``), told on a channel named for the reader so that
a caller waiting for its own write hears of it (``services.followers.waiting``)."""

import asyncpg

from services.followers.reader import Connection

DDL = """
CREATE TABLE IF NOT EXISTS reader_positions (
    reader text PRIMARY KEY,
    position bigint NOT NULL DEFAULT 0
);
"""


async def register(conn: asyncpg.Pool | Connection, reader: str) -> None:
    """The reader's row, at position 0 unless it has one."""
    await conn.execute(
        "INSERT INTO reader_positions (reader) VALUES ($1) ON CONFLICT DO NOTHING", reader
    )


async def read_position(pool: asyncpg.Pool | Connection, reader: str) -> int:
    value = await pool.fetchval("SELECT position FROM reader_positions WHERE reader = $1", reader)
    return int(value or 0)


async def locked_position(conn: Connection, reader: str) -> int:
    """The reader's position, its row locked until the transaction ends: a move or a swap
    holds off every other until it is done."""
    value = await conn.fetchval(
        "SELECT position FROM reader_positions WHERE reader = $1 FOR UPDATE", reader
    )
    return int(value or 0)


async def set_position(
    conn: Connection, reader: str, position: int, said: str | None = None
) -> None:
    """Set the reader's position and tell its channel (``said``, else the position); in the
    caller's transaction, which holds the row (``locked_position``)."""
    await conn.execute(
        "UPDATE reader_positions SET position = $2 WHERE reader = $1", reader, position
    )
    await conn.execute("SELECT pg_notify($1, $2)", reader, said or str(position))


async def forget(conn: asyncpg.Pool | Connection, reader: str) -> None:
    await conn.execute("DELETE FROM reader_positions WHERE reader = $1", reader)


# A non-transactional reader's position moved forward (never back), and the move told, in one
# statement: its transaction is the statement's own. Gives the position it moved from, or
# nothing if it was already there (a swap, a former leader's last write).
MOVE = """
WITH moved AS (
    UPDATE reader_positions AS r SET position = $2::bigint
    FROM (SELECT position FROM reader_positions WHERE reader = $1 FOR UPDATE) AS stored
    WHERE r.reader = $1 AND stored.position < $2::bigint
    RETURNING stored.position AS stored
)
SELECT stored, pg_notify($1, ($2::bigint)::text) FROM moved
"""


async def moved_forward(conn: Connection, reader: str, upto: int) -> int | None:
    """Move the reader to ``upto`` in one statement; the position it moved from, or None
    when it was there already."""
    stored = await conn.fetchval(MOVE, reader, upto)
    return None if stored is None else int(stored)
