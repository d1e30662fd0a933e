"""The audit's rows as the trail writes them (``services.bus.audit_rows``, decisions D310)
read back as asyncpg's own codecs write the same values: every column, awkward values
included (no roles and several, no aggregate and several, a time in another zone, a
reason and a door absent, text beyond ASCII); and a text PostgreSQL refuses (a NUL, a lone
surrogate) never fails the COPY of the rows beside it."""

import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import asyncpg

from services.bus.audit import TABLE, AuditTrail, ensure_table
from services.bus.audit_rows import COLUMNS, Heads, row

AT = datetime(2026, 12, 6, 7, 8, 9, 123456, tzinfo=UTC)
ROWS = [
    ("t", "ann", frozenset(), False, "RecordFeedback", "applied", None, "http", 1, AT,
     "c-1", [uuid.uuid4()]),
    ("t", "Zoë 名前", frozenset({"Reviewer", "PlatformAdmin", "Contributor"}), True,
     "GET /factory/audit", "refused", "not-permitted", None, 1,
     AT.astimezone(timezone(timedelta(hours=-5))), "", []),
    ("tenant-2", "svc", None, True, "RecordFeedbackItem", "applied", None, "kafka", 100,
     datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), "k" * 300,
     [uuid.uuid4() for _ in range(3)]),
]  # fmt: skip


def asyncpg_record(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """The same row in the order of ``COLUMNS``, as ``copy_records_to_table`` takes it."""
    *head, at, command_id, aggregates = values
    roles = tuple(sorted(head[2] or ()))
    return (*head[:2], roles, *head[3:], at, command_id, aggregates)


async def test_rows_read_back_as_asyncpgs_codecs_write_them(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await ensure_table(conn)
        await conn.execute(f"CREATE TABLE written_by_asyncpg (LIKE {TABLE} INCLUDING DEFAULTS)")
        heads = Heads()
        encoded = [row(heads.make(tuple(values[:9])), *values[9:]) for values in ROWS]  # type: ignore[arg-type]
        trail = AuditTrail(conn)  # type: ignore[arg-type]
        trail._rows = encoded
        await trail.flush()
        await conn.copy_records_to_table(
            "written_by_asyncpg", records=[asyncpg_record(v) for v in ROWS], columns=COLUMNS
        )
        columns = ", ".join(COLUMNS)
        ours = await conn.fetch(f"SELECT {columns} FROM {TABLE} ORDER BY id")
        theirs = await conn.fetch(f"SELECT {columns} FROM written_by_asyncpg ORDER BY id")
    finally:
        await conn.close()
    assert [tuple(r) for r in ours] == [tuple(r) for r in theirs]
    assert len(ours) == len(ROWS)
    assert ours[1]["roles"] == ["Contributor", "PlatformAdmin", "Reviewer"]
    assert ours[2]["at"] == datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)


async def test_text_postgresql_refuses_is_replaced_not_a_failed_copy(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await ensure_table(conn)
        heads = Heads()
        trail = AuditTrail(conn)  # type: ignore[arg-type]
        trail._rows = [
            row(heads.make(("t", "nul\x00actor", None, False, "C", "applied", None, None, 1)), AT,
                "key\ud800", []),
            row(heads.make(("t", "ann", None, False, "C", "applied", None, None, 1)), AT, "c", []),
        ]  # fmt: skip
        await trail.flush()
        found = await conn.fetch(f"SELECT actor, command_id FROM {TABLE} ORDER BY id")
    finally:
        await conn.close()
    assert trail._rows == []
    assert [tuple(r) for r in found] == [("nul\ufffdactor", "key?"), ("ann", "c")]
