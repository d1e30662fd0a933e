"""A reviewer's annotations of a report, kept by the Inbox read model beside the report
(decisions D170–D174): every correction of its Kind and Addressee (the last one in force, each
with when, so a week's digest reads the Kind in force at the week's end), its tags, and its
private notes.

The tables live in the Inbox's schema and are written by ``projections.inbox.Inbox``, in the
same transaction as the report's row; the queries here answer what a report shows of them.
"""

from collections.abc import Sequence
from typing import Any
from uuid import UUID

import asyncpg

from projections import events as ev
from services.followers.reader import Connection, Positioned

HANDLES = (ev.REPORT_KIND_CORRECTED, ev.REPORT_TAGGED, ev.REPORT_NOTE_ADDED)


def ddl(schema: str) -> str:
    return f"""
    CREATE TABLE IF NOT EXISTS {schema}.kind_corrections (
        report_id uuid NOT NULL,
        position bigint NOT NULL,
        at timestamptz NOT NULL,
        kind text NOT NULL,
        addressee text NOT NULL,
        corrected_by text NOT NULL,
        PRIMARY KEY (report_id, position)
    );
    CREATE TABLE IF NOT EXISTS {schema}.report_tags (
        report_id uuid NOT NULL,
        tag text NOT NULL,
        tagged_by text NOT NULL,
        at timestamptz NOT NULL,
        PRIMARY KEY (report_id, tag)
    );
    CREATE TABLE IF NOT EXISTS {schema}.report_notes (
        report_id uuid NOT NULL,
        position bigint NOT NULL,
        at timestamptz NOT NULL,
        noted_by text NOT NULL,
        words text NOT NULL,
        PRIMARY KEY (report_id, position)
    );
    """


def kind_in_force(schema: str, report: str = "r", until: str | None = None) -> str:
    """SQL for the Kind in force of the row ``report`` of ``{schema}.reports``: the last
    correction (made before ``until``, an SQL expression, when given), else the reporter's."""
    before = f" AND c.at < {until}" if until else ""
    return (
        f"COALESCE((SELECT c.kind FROM {schema}.kind_corrections c "
        f"WHERE c.report_id = {report}.report_id{before} ORDER BY c.position DESC LIMIT 1), "
        f"{report}.kind)"
    )


async def apply(conn: Connection, schema: str, p: Positioned) -> None:
    e, at = p.event, p.event.timestamp
    match ev.topic_of(e):
        case ev.REPORT_KIND_CORRECTED:
            await conn.execute(
                f"INSERT INTO {schema}.kind_corrections VALUES ($1, $2, $3, $4, $5, $6) "
                "ON CONFLICT DO NOTHING",
                e.originator_id, p.position, at, e.kind, e.addressee, e.corrected_by,
            )  # fmt: skip
        case ev.REPORT_TAGGED:
            await conn.execute(
                f"INSERT INTO {schema}.report_tags VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                e.originator_id, e.tag, e.tagged_by, at,
            )  # fmt: skip
        case ev.REPORT_NOTE_ADDED:
            await conn.execute(
                f"INSERT INTO {schema}.report_notes VALUES ($1, $2, $3, $4, $5) "
                "ON CONFLICT DO NOTHING",
                e.originator_id, p.position, at, e.noted_by, e.words,
            )  # fmt: skip
        case _:
            raise TypeError(f"the annotations do not handle {type(e).__name__}")


# Each annotation as (actor, step, detail) of the report's lifecycle, which its reporter
# reads: a note's words are not in it, only that one was written (D173).
STEPS: dict[str, Any] = {
    ev.REPORT_KIND_CORRECTED: lambda e: (e.corrected_by, f"corrected the kind to {e.kind}",
                                         f"for {e.addressee}"),
    ev.REPORT_TAGGED: lambda e: (e.tagged_by, "tagged", e.tag),
    ev.REPORT_NOTE_ADDED: lambda e: (e.noted_by, "added a private note", None),
}  # fmt: skip


async def annotations_of(
    pool: asyncpg.Pool, report_id: UUID, *, notes: bool, schema: str
) -> dict[str, Any]:
    """What a report shows of its annotations (ask only for a report ``get_report``
    answered): the correction in force, the tags, and, when ``notes``, the private notes."""
    corrected = await pool.fetchrow(
        f"SELECT at, kind, addressee, corrected_by FROM {schema}.kind_corrections "
        "WHERE report_id = $1 ORDER BY position DESC LIMIT 1",
        report_id,
    )
    tags = await pool.fetch(
        f"SELECT tag FROM {schema}.report_tags WHERE report_id = $1 ORDER BY tag", report_id
    )
    written: Sequence[asyncpg.Record] = []
    if notes:
        written = await pool.fetch(
            f"SELECT at, noted_by, words FROM {schema}.report_notes WHERE report_id = $1 "
            "ORDER BY position",
            report_id,
        )
    return {
        "correction": None
        if corrected is None
        else {
            "kind": corrected["kind"],
            "addressee": corrected["addressee"],
            "correctedBy": corrected["corrected_by"],
            "correctedAt": corrected["at"].isoformat(),
        },
        "tags": [row["tag"] for row in tags],
        "notes": None
        if not notes
        else [
            {"at": row["at"].isoformat(), "notedBy": row["noted_by"], "words": row["words"]}
            for row in written
        ],
    }
