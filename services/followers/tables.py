"""The followers' tables: readers' positions, heartbeats and parked things."""

from services.followers import heartbeats, parking, positions
from services.followers.reader import Connection


async def ensure_tables(conn: Connection) -> None:
    """Idempotent; call it at start under the global DDL lock (concurrent CREATE ... IF NOT
    EXISTS can still collide in PostgreSQL's catalogue)."""
    await conn.execute(positions.DDL + heartbeats.DDL + parking.DDL)
    await conn.execute(parking.CARRY_OVER)
