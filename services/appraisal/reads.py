"""The facts an appraisal is derived from, and the stores the charter's sensors watch, read
through the read models' queries.

Each source is read on its own; one that cannot be read is named in ``Facts.unreadable`` and
the appraisal is partial — it is never read as empty (SPEC M16, M34). Each source's read is
bounded (``LIMIT``); a read that fills it is named ``truncated`` so counts read as lower bounds.
"""

import json
from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from contracts.goals import read_goal_refs
from contracts.neighbours import RunCounters
from projections import appraisal as facts_model
from projections import inbox, learning_proposals
from services.appraisal.charter import EMPTY, Charter
from services.appraisal.domain import charter_of
from services.appraisal.facts import EvalRunFact, Facts, FeedbackFact, ReportFact, RunFact
from services.appraisal.readings import Sample

LIMIT = 10_000
UNREADABLE = (asyncpg.PostgresError, OSError, asyncpg.InterfaceError)


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


async def read_charter(pool: asyncpg.Pool, tenant_id: str) -> StoredCharter:
    """The tenant's charter; none written is the empty charter (M16). Raises if unreadable."""
    row = await facts_model.charter_row(pool, tenant_id)
    if row is None:
        return StoredCharter(EMPTY, "", None, None)
    charter = charter_of(json.loads(row["lines"]), json.loads(row["findings"]))
    return StoredCharter(charter, row["document"], row["written_by"], row["written_at"])


async def read_facts(pool: asyncpg.Pool, tenant_id: str, scope: Scope) -> Facts:
    """The facts of a run, an agent or the whole tenant in the window; every source named
    read or unreadable."""
    read: list[str] = []
    unreadable: list[str] = []
    found: dict[str, list[Any]] = {}
    for source in facts_model.FACT_SOURCES:
        try:
            found[source] = await facts_model.fact_rows(
                pool, tenant_id, source, run_id=scope.run_id, agent=scope.agent,
                since=scope.since, until=scope.until, limit=LIMIT,
            )  # fmt: skip
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


async def sample_inbox(pool: asyncpg.Pool, tenant_id: str, now: datetime) -> Sample:
    """Reports waiting New in the Inbox, and the oldest one's wait."""
    return await queue_sample(inbox.waiting_new(pool, tenant_id), now)


async def sample_proposals(pool: asyncpg.Pool, tenant_id: str, now: datetime) -> Sample:
    """Undecided learning proposals; no read model of them yet is unreadable, never zero."""
    return await queue_sample(learning_proposals.undecided(pool, tenant_id), now)


async def queue_sample(queue: Awaitable[tuple[int, datetime | None]], now: datetime) -> Sample:
    """A queue's length and its oldest item's wait, as ``queue`` reads them; unreadable if
    its read model cannot be read."""
    try:
        waiting, oldest = await queue
    except UNREADABLE:
        return Sample(readable=False)
    wait = None if oldest is None else max((now - oldest).total_seconds(), 0.0)
    return Sample(waiting=waiting, oldest_wait=wait)


async def sample_evals(pool: asyncpg.Pool, tenant_id: str, since: datetime | None) -> Sample:
    """Eval runs since ``since`` and how many failed."""
    try:
        runs, failed = await facts_model.eval_runs_since(pool, tenant_id, since)
    except UNREADABLE:
        return Sample(readable=False)
    return Sample(runs=runs, failed=failed)
