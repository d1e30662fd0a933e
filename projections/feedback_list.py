"""The feedback list: every piece of feedback, by subject and kind (SPEC C12).

Answers ``GET /factory/feedback``; every query is scoped to one tenant (C51).
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter
from typing import Any

import asyncpg

from projections.events import FEEDBACK_RECORDED
from projections.read_model import attributes_json, insert_rows
from services.followers.reader import Connection, Positioned

SCHEMA = "rm_feedback_list"

COLUMNS = (
    "feedback_id",
    "tenant_id",
    "project_id",
    "subject_kind",
    "subject_ref",
    "kind",
    "rating",
    "comment_ref",
    "corrected_artifact_ref",
    "given_by",
    "given_at",
    "trace_id",
    "span_id",
    "gen_ai",
    "position",
)
SELECTED = ", ".join(COLUMNS)
# The event's fields of a row's columns, all but the GenAI attributes and the position, in their
# order: one C call a
# row instead of eleven attribute lookups, for a rebuild builds a row of every feedback.
EVENT_FIELD = {"feedback_id": "originator_id", "given_at": "timestamp"}  # else the same name
FIELDS = attrgetter(*(EVENT_FIELD.get(column, column) for column in COLUMNS[:-2]))


class FeedbackList:
    name = "feedback_list"
    handles = (FEEDBACK_RECORDED,)
    insert_only = ("feedback",)  # a rebuild adds its key after loading (services.projecting.runner)
    order_free = (FEEDBACK_RECORDED,)  # a row each: a rebuild loads them apart

    def ddl(self, schema: str) -> str:
        return f"""
        CREATE TABLE IF NOT EXISTS {schema}.feedback (
            feedback_id uuid NOT NULL,
            tenant_id text NOT NULL,
            project_id text NOT NULL,
            subject_kind text NOT NULL,
            subject_ref text NOT NULL,
            kind text NOT NULL,
            rating integer,
            comment_ref text,
            corrected_artifact_ref text,
            given_by text NOT NULL,
            given_at timestamptz NOT NULL,
            trace_id text,
            span_id text,
            gen_ai jsonb,
            position bigint NOT NULL,
            PRIMARY KEY (tenant_id, position)
        );
        """

    def indexes(self, schema: str) -> str:
        # A subject's feedback is found by its ref, its kind filtered on the way (a ref names
        # one kind of subject but by rare chance): no index on the kind, which every write and
        # every rebuild would pay for and no read needs. A tenant's list, newest first, is its
        # key read backwards. The ref leads, the tenant second: a read names both, and an index
        # sorted by the few tenants' names first compares them again and again before the ref.
        return f"""
        CREATE INDEX IF NOT EXISTS feedback_by_ref
            ON {schema}.feedback (subject_ref, tenant_id, position DESC);
        """

    async def apply(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        rows = [(*FIELDS(p.event), attributes_json(p.event), p.position) for p in batch]
        # No conflict target: a feedback is one event, at one position, made once.
        await insert_rows(conn, f"{schema}.feedback", COLUMNS, rows, conflict="")


@dataclass(frozen=True)
class FeedbackPage:
    items: list[dict[str, Any]]
    next_before: int | None  # pass as ``before`` for the next (older) page


async def list_feedback(
    pool: asyncpg.Pool | Connection,
    tenant_id: str,
    *,
    subject_kind: str | None = None,
    subject_ref: str | None = None,
    kind: str | None = None,
    before: int | None = None,
    limit: int = 50,
    schema: str = SCHEMA,
) -> FeedbackPage:
    """Newest first, keyset-paginated on position, always within one tenant.

    Only the filters given are in the statement: one that says ``$2 IS NULL OR …`` for every
    filter gets a generic plan once prepared, which walks the tenant's whole list by position
    to find one subject, slower the longer the history."""
    where, args = chosen(tenant_id, subject_kind, subject_ref, kind)
    if before is not None:
        args.append(before)
        where.append(f"position < ${len(args)}")
    args.append(limit + 1)
    rows = await pool.fetch(
        f"SELECT {SELECTED} FROM {schema}.feedback WHERE {' AND '.join(where)} "
        f"ORDER BY position DESC LIMIT ${len(args)}",
        *args,
    )
    items = [feedback_json(row) for row in rows[:limit]]
    next_before = rows[limit - 1]["position"] if len(rows) > limit else None
    return FeedbackPage(items, next_before)


def chosen(
    tenant_id: str, subject_kind: str | None, subject_ref: str | None, kind: str | None
) -> tuple[list[str], list[object]]:
    """The WHERE terms and arguments of the filters given (only those: see ``list_feedback``)."""
    given = {"subject_kind": subject_kind, "subject_ref": subject_ref, "kind": kind}
    where, args = ["tenant_id = $1"], list[object]([tenant_id])
    for column, value in given.items():
        if value is not None:
            args.append(value)
            where.append(f"{column} = ${len(args)}")
    return where, args


async def count_feedback(
    pool: asyncpg.Pool | Connection,
    tenant_id: str,
    *,
    subject_kind: str | None = None,
    subject_ref: str | None = None,
    kind: str | None = None,
    schema: str = SCHEMA,
) -> int:
    """How many rows ``list_feedback`` pages through with these filters (an export's total)."""
    where, args = chosen(tenant_id, subject_kind, subject_ref, kind)
    found = await pool.fetchval(
        f"SELECT count(*) FROM {schema}.feedback WHERE {' AND '.join(where)}", *args
    )
    return int(found)


def feedback_json(row: asyncpg.Record) -> dict[str, Any]:
    """A row in the API's words (seed 004's HumanFeedback fields)."""
    return {
        "feedbackId": str(row["feedback_id"]),
        "tenantId": row["tenant_id"],
        "projectId": row["project_id"],
        "subjectKind": row["subject_kind"],
        "subjectRef": row["subject_ref"],
        "kind": row["kind"],
        "rating": row["rating"],
        "commentRef": row["comment_ref"],
        "correctedArtifactRef": row["corrected_artifact_ref"],
        "givenBy": row["given_by"],
        "givenAt": row["given_at"].isoformat(),
        "traceId": row["trace_id"],
        "spanId": row["span_id"],
        "genAi": json.loads(row["gen_ai"]) if row["gen_ai"] is not None else None,
        "position": row["position"],
    }


async def low_on_evaluations(
    pool: asyncpg.Pool, low_rating: int, schema: str = SCHEMA
) -> list[asyncpg.Record]:
    """Corrections, escalations and ratings of at most ``low_rating`` given on evaluations, of
    every tenant: ``feedback_id, tenant_id, subject_ref, kind, rating, given_at``."""
    return await pool.fetch(
        "SELECT feedback_id, tenant_id, subject_ref, kind, rating, given_at "
        f"FROM {schema}.feedback WHERE subject_kind = 'evaluation' "
        "AND (kind IN ('correction', 'escalation') OR (kind = 'rating' AND rating <= $1))",
        low_rating,
    )


async def comments_past(
    pool: asyncpg.Pool, tenant_id: str, before: datetime, schema: str = SCHEMA
) -> list[str]:
    """The comment artifacts of the tenant's feedback given before ``before`` that no feedback
    given since references, as a comment or a corrected artifact (retention, decisions D75):
    content-addressed, the same bytes may be another, newer feedback's, which keeps them."""
    rows = await pool.fetch(
        f"SELECT comment_ref FROM {schema}.feedback "
        "WHERE tenant_id = $1 AND comment_ref IS NOT NULL "
        "GROUP BY comment_ref HAVING max(given_at) < $2 "
        f"EXCEPT SELECT corrected_artifact_ref FROM {schema}.feedback "
        "WHERE tenant_id = $1 AND corrected_artifact_ref IS NOT NULL AND given_at >= $2",
        tenant_id,
        before,
    )
    return sorted(row["comment_ref"] for row in rows)
