"""Every reader's heartbeat, in one table and by one writer: the log's readers (one leader
each), the scheduler and the inbound consumers (several members of one group side by side).
Any process reads them (``feedbackloop status``, ``/readyz``: ``services.processes.health``):
a reader not heard from lately is dead or never started.

A beat says what the reader does now (``state``) and, where the reader counts them itself,
how far behind it is (``lag``: orders pending, messages unread) and what it has settled. A
change of state is written at once; otherwise every ``every`` seconds. A missed beat only
reads as "not seen lately", never as a failure of the reader.
"""

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass

import asyncpg

from services.followers.reader import Connection

DDL = """
CREATE TABLE IF NOT EXISTS heartbeats (
    reader text NOT NULL,
    member text NOT NULL DEFAULT '',  -- which of a group's members, where several run at once
    state text NOT NULL,
    lag bigint NOT NULL DEFAULT 0,
    settled bigint NOT NULL DEFAULT 0,
    beat_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (reader, member)
);
"""

# Seconds since a beat, as a column.
SILENCE = "extract(epoch FROM now() - beat_at)::float8"


def inbound_reader(group_id: str) -> str:
    """The reader the inbound consumers of a Kafka group beat as, each a member of it."""
    return f"inbound:{group_id}"


@dataclass(frozen=True)
class Beat:
    state: str
    lag: int = 0
    settled: int = 0


@dataclass(frozen=True)
class Heard:
    """A reader's (or member's) last beat, and how many seconds ago it was."""

    member: str
    state: str
    lag: int
    settled: int
    silence: float


async def beat(pool: asyncpg.Pool | Connection, reader: str, now: Beat, member: str = "") -> None:
    await pool.execute(
        "INSERT INTO heartbeats (reader, member, state, lag, settled) "
        "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (reader, member) DO UPDATE "
        "SET state = $3, lag = $4, settled = $5, beat_at = now()",
        reader, member, now.state, now.lag, now.settled,
    )  # fmt: skip


async def beating(
    pool: asyncpg.Pool,
    reader: str,
    now: Callable[[], Beat],
    changed: asyncio.Event,
    *,
    every: float,
    member: str = "",
    stop: asyncio.Event | None = None,
) -> None:
    """Beat every ``every`` seconds and at every change (``changed`` set), until ``stop``
    (or until cancelled)."""
    while stop is None or not stop.is_set():
        changed.clear()  # before the beat, so a change meanwhile is not lost
        with contextlib.suppress(Exception):  # a missed beat reads as "not seen lately"
            await beat(pool, reader, now(), member)
        waits = [changed] if stop is None else [changed, stop]
        await first_set(*waits, timeout=every)


async def first_set(*events: asyncio.Event, timeout: float) -> None:
    """Wait until one of the events is set, or the timeout passes."""
    waiters = [asyncio.create_task(event.wait()) for event in events]
    await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    for waiter in waiters:
        waiter.cancel()


async def forget_silent(pool: asyncpg.Pool, reader: str, *, seconds: float) -> None:
    """The reader's members not heard from for ``seconds``: gone, forgotten."""
    with contextlib.suppress(Exception):
        await pool.execute(
            f"DELETE FROM heartbeats WHERE reader = $1 AND {SILENCE} > $2", reader, seconds
        )


async def heard(pool: asyncpg.Pool | Connection, reader: str) -> list[Heard]:
    """The reader's members' last beats, the latest first."""
    rows = await pool.fetch(
        f"SELECT member, state, lag, settled, {SILENCE} AS silence FROM heartbeats "
        "WHERE reader = $1 ORDER BY beat_at DESC",
        reader,
    )
    return [Heard(**dict(row)) for row in rows]
