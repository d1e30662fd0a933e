"""Reading the appraisal read model, and the stores the charter's sensors watch.

Each source is read on its own; one that cannot be read is named in ``Facts.unreadable`` and
the appraisal is partial — it is never read as empty (SPEC M16, M34). Each source's read is
bounded (``LIMIT``); a read that fills it is named ``truncated`` so counts read as lower bounds.
"""

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from contracts.goals import read_goal_refs
from contracts.neighbours import RunCounters
from services.appraisal.charter import EMPTY, Charter
from services.appraisal.domain import charter_of
from services.appraisal.facts import EvalRunFact, Facts, FeedbackFact, ReportFact, RunFact
from services.appraisal.readings import Sample

SCHEMA = "rm_appraisal"
LIMIT = 10_000
UNREADABLE = (asyncpg.PostgresError, OSError, asyncpg.InterfaceError)
# Proposal states that are decided (learning proposals' read model, issue 10): anything else
# still waits for a maintainer.
DECIDED = ("accepted", "rejected", "withdrawn", "superseded")


@dataclass(frozen=True)
class Scope:
    """Which facts: one run's, one agent's, or the tenant's (a charter line's), in a window."""

    run_id: str | None = None
    agent: str | None = None
    since: datetime | None = None
    until: datetime | None = None


@dataclass(frozen=True)
class StoredCharter:
    charter: Charter
    document: str
    written_by: str | None
    written_at: datetime | None


async def read_charter(pool: asyncpg.Pool, tenant_id: str, schema: str = SCHEMA) -> StoredCharter:
    """The tenant's charter; none written is the empty charter (M16). Raises if unreadable."""
    row = await pool.fetchrow(
        f"SELECT document, lines, findings, written_by, written_at FROM {schema}.charters "
        "WHERE tenant_id = $1",
        tenant_id,
    )
    if row is None:
        return StoredCharter(EMPTY, "", None, None)
    charter = charter_of(json.loads(row["lines"]), json.loads(row["findings"]))
    return StoredCharter(charter, row["document"], row["written_by"], row["written_at"])


def window(column: str, first: int) -> str:
    return (
        f" AND (${first}::timestamptz IS NULL OR {column} >= ${first})"
        f" AND (${first + 1}::timestamptz IS NULL OR {column} < ${first + 1})"
    )


async def read_facts(
    pool: asyncpg.Pool, tenant_id: str, scope: Scope, schema: str = SCHEMA
) -> Facts:
    """The facts of a run, an agent or the whole tenant in the window; every source named
    read or unreadable."""
    read: list[str] = []
    unreadable: list[str] = []
    found: dict[str, list[Any]] = {}
    who = (tenant_id, scope.run_id, scope.agent, scope.since, scope.until)
    runs_of_agent = f"(SELECT run_id FROM {schema}.runs WHERE tenant_id = $1 AND agent = $3)"
    queries = {
        "feedback": (
            f"SELECT * FROM {schema}.feedback WHERE tenant_id = $1 "
            "AND ($2::text IS NULL OR run_id = $2) "
            f"AND ($3::text IS NULL OR run_id IN {runs_of_agent})" + window("at", 4)
        ),
        "reports": (
            f"SELECT * FROM {schema}.reports WHERE tenant_id = $1 "
            "AND submitted_at IS NOT NULL AND (kind IS NOT NULL OR category = 'answer') "
            "AND ($2::text IS NULL OR run_id = $2) AND ($3::text IS NULL OR agent = $3)"
            + window("submitted_at", 4)
        ),
        "evals": (
            f"SELECT * FROM {schema}.eval_runs WHERE tenant_id = $1 "
            "AND ($2::text IS NULL OR run_id = $2) AND ($3::text IS NULL OR agent = $3)"
            + window("at", 4)
        ),
        "runs": (
            f"SELECT * FROM {schema}.runs WHERE tenant_id = $1 "
            "AND ($2::text IS NULL OR run_id = $2) AND ($3::text IS NULL OR agent = $3)"
            + window("completed_at", 4)
        ),
    }
    for source, sql in queries.items():
        try:
            found[source] = await pool.fetch(f"{sql} LIMIT {LIMIT}", *who)
        except UNREADABLE:
            unreadable.append(source)
            found[source] = []
        else:
            read.append(source)
    return Facts(
        feedback=tuple(feedback_fact(row) for row in found["feedback"]),
        reports=tuple(report_fact(row) for row in found["reports"]),
        evals=tuple(
            EvalRunFact(r["run_id"], r["agent"], r["passed"], r["invented"], r["at"])
            for r in found["evals"]
        ),
        runs=tuple(run_fact(row) for row in found["runs"]),
        read=tuple(read),
        unreadable=tuple(unreadable),
    )


def feedback_fact(row: asyncpg.Record) -> FeedbackFact:
    serves = read_goal_refs(json.loads(row["serves"]))  # M05: tolerant, from a record
    return FeedbackFact(
        str(row["feedback_id"]), row["run_id"], row["kind"], row["rating"], row["at"], serves
    )


def report_fact(row: asyncpg.Record) -> ReportFact:
    return ReportFact(
        report_id=row["report_id"],
        run_id=row["run_id"],
        agent=row["agent"],
        kind=row["kind"],
        reached_reporter=row["reached"],
        submitted_at=row["submitted_at"],
        status=row["status"],
        resolved_with_change=row["resolved_with_change"],
        serves=read_goal_refs(json.loads(row["serves"])),
    )


def run_fact(row: asyncpg.Record) -> RunFact:
    counters = row["counters"]
    return RunFact(
        run_id=row["run_id"],
        agent=row["agent"],
        completed_at=row["completed_at"],
        development=row["development"],
        counters=None if counters is None else RunCounters.model_validate_json(counters),
        serves=read_goal_refs(json.loads(row["serves"])),
    )


# ---- What the sensors watch (SPEC M20): each an honest sample or unreadable ----------------


async def sample_inbox(
    pool: asyncpg.Pool, tenant_id: str, now: datetime, schema: str = "rm_inbox"
) -> Sample:
    """Reports waiting New in the Inbox, and the oldest one's wait."""
    try:
        row = await pool.fetchrow(
            f"SELECT count(*) AS waiting, min(submitted_at) AS oldest FROM {schema}.reports "
            "WHERE tenant_id = $1 AND in_inbox AND status = 'New'",
            tenant_id,
        )
    except UNREADABLE:
        return Sample(readable=False)
    return queue_sample(row, now)


async def sample_proposals(pool: asyncpg.Pool, tenant_id: str, now: datetime) -> Sample:
    """Undecided learning proposals (their read model's ``learning_proposals`` table, in
    whichever schema holds it); no such table yet is unreadable, never zero."""
    try:
        table = await pool.fetchval(
            "SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) "
            "FROM information_schema.tables WHERE table_name = 'learning_proposals' "
            "ORDER BY table_schema LIMIT 1"
        )
        if table is None:
            return Sample(readable=False)
        row = await pool.fetchrow(
            f"SELECT count(*) AS waiting, min(raised_at) AS oldest FROM {table} "
            "WHERE tenant_id = $1 AND NOT (lower(state) = ANY($2::text[]))",
            tenant_id,
            list(DECIDED),
        )
    except UNREADABLE:
        return Sample(readable=False)
    return queue_sample(row, now)


def queue_sample(row: asyncpg.Record | None, now: datetime) -> Sample:
    if row is None:
        return Sample(readable=False)
    oldest = row["oldest"]
    wait = None if oldest is None else max((now - oldest).total_seconds(), 0.0)
    return Sample(waiting=row["waiting"], oldest_wait=wait)


async def sample_evals(
    pool: asyncpg.Pool, tenant_id: str, since: datetime | None, schema: str = SCHEMA
) -> Sample:
    """Eval runs since ``since`` and how many failed."""
    try:
        row = await pool.fetchrow(
            f"SELECT count(*) AS runs, count(*) FILTER (WHERE NOT passed) AS failed "
            f"FROM {schema}.eval_runs WHERE tenant_id = $1 "
            "AND ($2::timestamptz IS NULL OR at >= $2)",
            tenant_id,
            since,
        )
    except UNREADABLE:
        return Sample(readable=False)
    if row is None:
        return Sample(readable=False)
    return Sample(runs=row["runs"], failed=row["failed"])
