"""The rebuild's ``timestamptz`` codec against asyncpg's own, on a real PostgreSQL: every
value lands as the same timestamp, reads back as the same ``datetime``, and a value asyncpg
refuses is refused alike."""

from datetime import UTC, date, datetime, timedelta, timezone

import asyncpg
import pytest

from projections.timestamps import quick_timestamps
from services.processes.bootstrap import Runtime

NOW = datetime.now(UTC)
VALUES = [
    NOW,
    NOW.replace(microsecond=0),
    NOW.replace(microsecond=999_999),
    datetime(2000, 1, 1, tzinfo=UTC),
    datetime(2000, 1, 1, tzinfo=UTC) - timedelta(microseconds=1),
    datetime(1969, 7, 20, 20, 17, 40, 5, tzinfo=UTC),
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),  # asyncpg sends infinity
    datetime(1, 1, 1, tzinfo=UTC) + timedelta(microseconds=1),
    NOW.astimezone(timezone(timedelta(hours=5, minutes=30))),
    NOW.astimezone(timezone(-timedelta(hours=11))),
    NOW.replace(tzinfo=timezone(timedelta(0))),  # UTC, but not the UTC object
    NOW.replace(tzinfo=None),  # naive: asyncpg reads it as the process's local time
    datetime.max,
    datetime.min,
    date(2026, 12, 1),
]


async def test_the_quick_codec_writes_and_reads_what_asyncpgs_does(runtime: Runtime) -> None:
    async with runtime.pool.acquire() as conn:
        await conn.execute("CREATE TEMP TABLE stamps (n int, codec text, at timestamptz)")
        rows = list(enumerate(VALUES))
        await conn.copy_records_to_table(
            "stamps", records=[(n, "asyncpg", v) for n, v in rows], columns=["n", "codec", "at"]
        )
        async with quick_timestamps(conn):
            await conn.copy_records_to_table(
                "stamps", records=[(n, "quick", v) for n, v in rows], columns=["n", "codec", "at"]
            )
            await conn.executemany("INSERT INTO stamps VALUES ($1, 'quick, bound', $2)", rows)
            quick_reads = await conn.fetch("SELECT n, codec, at FROM stamps ORDER BY n, codec")
        stored = await conn.fetch(
            "SELECT n, array_agg(DISTINCT at::text) AS texts FROM stamps GROUP BY n ORDER BY n"
        )
        reads = await conn.fetch("SELECT n, codec, at FROM stamps ORDER BY n, codec")
    assert [(r["n"], len(r["texts"])) for r in stored] == [(n, 1) for n in range(len(VALUES))]
    assert [tuple(r.values()) for r in quick_reads] == [tuple(r.values()) for r in reads]
    assert {type(r["at"]) for r in reads} == {datetime}


async def test_a_value_asyncpg_refuses_is_refused_alike(runtime: Runtime) -> None:
    async with runtime.pool.acquire() as conn:
        await conn.execute("CREATE TEMP TABLE stamps (at timestamptz)")
        refused = "expected a datetime.date or datetime.datetime instance, got 'str'"
        with pytest.raises(asyncpg.DataError, match=refused):
            await conn.execute("INSERT INTO stamps VALUES ($1)", "2026-12-01")
        async with quick_timestamps(conn):
            with pytest.raises(asyncpg.DataError, match=refused):
                await conn.execute("INSERT INTO stamps VALUES ($1)", "2026-12-01")
