"""Console sessions ended on the server side (decisions D122): the sessions signed out of,
and per person the time up to which a PlatformAdmin ended every session of theirs.

Asked at every request of a console session (``session_ended``), from every process, as the
key ring is (decisions D29): an ended session opens nothing from that request on, wherever it
is replayed. It runs on the access read model's reader, in its schema (``projections.access``),
as the agent register does (decisions D78): no connection more for each process that projects.

Its rows are keyed by the aggregates' ids (a ``ConsoleSession``'s, a ``PersonsSessions``'),
uuid5 of the tenant, the person and the session, never by the person's id, which the log seals
(decisions D138): after an erasure's rebuild an ended session still reads as ended (fail closed).
The asker derives the same ids (``services.access.sessions``). The tables took new names when
their key changed, so that a start creates them and ``feedbackloop rebuild access`` fills them
(read models are rebuilt, not migrated: D21).
"""

from collections.abc import Sequence
from datetime import datetime
from uuid import UUID

import asyncpg

from projections import events as ev
from services.followers.reader import Connection, Positioned

SCHEMA = "rm_access"  # the access read model's, whose reader applies this part


class EndedSessions:
    """A part of the access read model: its events, tables and apply."""

    handles = (ev.CONSOLE_SESSION_ENDED, ev.CONSOLE_SESSIONS_ALL_ENDED)

    def ddl(self, schema: str) -> str:
        return f"""
        CREATE TABLE IF NOT EXISTS {schema}.ended_sessions (
            tenant_id text NOT NULL,
            session uuid NOT NULL,
            ended_at timestamptz NOT NULL,
            PRIMARY KEY (tenant_id, session)
        );
        CREATE TABLE IF NOT EXISTS {schema}.sessions_ended_until (
            tenant_id text NOT NULL,
            persons_sessions uuid NOT NULL,
            until timestamptz NOT NULL,
            PRIMARY KEY (tenant_id, persons_sessions)
        );
        """

    async def apply(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        for p in batch:
            e = p.event
            match ev.topic_of(e):
                case ev.CONSOLE_SESSION_ENDED:
                    await conn.execute(
                        f"INSERT INTO {schema}.ended_sessions "
                        "(tenant_id, session, ended_at) VALUES ($1, $2, $3) "
                        "ON CONFLICT DO NOTHING",
                        e.tenant_id, e.originator_id, e.timestamp,
                    )  # fmt: skip
                case ev.CONSOLE_SESSIONS_ALL_ENDED:
                    await conn.execute(
                        f"INSERT INTO {schema}.sessions_ended_until AS t "
                        "(tenant_id, persons_sessions, until) VALUES ($1, $2, $3) "
                        "ON CONFLICT (tenant_id, persons_sessions) "
                        "DO UPDATE SET until = greatest(t.until, excluded.until)",
                        e.tenant_id, e.originator_id, e.timestamp,
                    )  # fmt: skip
                case _:
                    raise TypeError(f"ended sessions do not handle {type(e).__name__}")


async def session_ended(
    pool: asyncpg.Pool,
    tenant_id: str,
    session: UUID,
    persons_sessions: UUID,
    started: datetime,
    schema: str = SCHEMA,
) -> bool:
    """Whether the session whose ``ConsoleSession`` id is ``session``, begun at ``started``,
    was signed out of, or begun before a PlatformAdmin ended all of its person's (their
    ``PersonsSessions`` id is ``persons_sessions``)."""
    ended: bool = await pool.fetchval(
        f"SELECT EXISTS (SELECT 1 FROM {schema}.ended_sessions WHERE tenant_id = $1 "
        "AND session = $2) OR EXISTS (SELECT 1 FROM "
        f"{schema}.sessions_ended_until WHERE tenant_id = $1 AND persons_sessions = $3 "
        "AND until >= $4)",
        tenant_id,
        session,
        persons_sessions,
        started,
    )
    return ended
