"""``timestamptz`` values as a rebuild's bulk writes send them: asyncpg's own binary form,
computed in fewer steps (the fast path of the rebuild's connection, ``quick_timestamps``).

Every recorded feedback puts a timestamp in two read models, and asyncpg's encoder takes
about as long on one ``timestamptz`` as on the rest of its row (comparisons with its
infinities, ``astimezone``, a ``timedelta`` taken apart attribute by attribute). An event's
timestamp is always an aware UTC ``datetime``: for those, one
subtraction and one division give the same microseconds since 2000-01-01. Every other value
takes ``exact``, asyncpg's steps written out, so what reaches PostgreSQL, and what a read on
the connection returns, is the same as without this codec
(``tests/integration/test_timestamps.py``).
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

from services.followers.reader import Connection

PG_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)
# PostgreSQL's infinities on the wire, and the datetimes asyncpg reads them as (and writes so).
PG_INFINITY, PG_NEGATIVE_INFINITY = 2**63 - 1, -(2**63)
INFINITY, NEGATIVE_INFINITY = datetime.max, datetime.min
# The microseconds asyncpg also writes as an infinity: ``datetime.max`` and ``min`` read as UTC.
INFINITY_TS, NEGATIVE_INFINITY_TS = 252455615999999999, -63082281600000000


def encode(value: Any) -> tuple[int]:
    """The microseconds since 2000-01-01 UTC that asyncpg would send for ``value``."""
    if type(value) is datetime and value.tzinfo is UTC:
        ts: int = (value - PG_EPOCH) // MICROSECOND
        if NEGATIVE_INFINITY_TS < ts < INFINITY_TS:
            return (ts,)
    return (exact(value),)


def exact(value: Any) -> int:
    """asyncpg's ``timestamptz_encode``, step by step."""
    if not isinstance(value, datetime):
        if not isinstance(value, date):
            raise TypeError(
                "expected a datetime.date or datetime.datetime instance, "
                f"got {type(value).__name__!r}"
            )
        local = datetime.now(UTC).astimezone().utcoffset()
        assert local is not None
        value = datetime(value.year, value.month, value.day, tzinfo=timezone(local))
    if value == INFINITY:
        return PG_INFINITY
    if value == NEGATIVE_INFINITY:
        return PG_NEGATIVE_INFINITY
    delta: timedelta = value.astimezone(UTC) - PG_EPOCH
    ts = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    if ts == INFINITY_TS:
        return PG_INFINITY
    if ts == NEGATIVE_INFINITY_TS:
        return PG_NEGATIVE_INFINITY
    return ts


def decode(value: tuple[int]) -> datetime:
    """asyncpg's ``timestamptz_decode``: an aware UTC datetime, or its infinities."""
    (ts,) = value
    if ts == PG_INFINITY:
        return INFINITY
    if ts == PG_NEGATIVE_INFINITY:
        return NEGATIVE_INFINITY
    return PG_EPOCH + timedelta(microseconds=ts)


@asynccontextmanager
async def quick_timestamps(conn: Connection) -> AsyncIterator[None]:
    """``conn`` writing and reading ``timestamptz`` by this module while in the block."""
    await conn.set_type_codec(
        "timestamptz", schema="pg_catalog", encoder=encode, decoder=decode, format="tuple"
    )
    try:
        yield
    finally:
        await conn.reset_type_codec("timestamptz", schema="pg_catalog")
