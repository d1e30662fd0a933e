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
from pydantic import BaseModel

from contracts.goals import read_goal_refs
from contracts.neighbours import RunCounters
from contracts.runtime_facts import (
    OwnerStop,
    OwnerVerdict,
    RunDraft,
    RunQuestion,
    RunRequest,
    RunStep,
)
from projections import appraisal_queries as facts_model
from projections import inbox
from services.appraisal.charter import EMPTY, Charter
from services.appraisal.domain import charter_of
from services.appraisal.facts import (
    EvalRunFact,
    Facts,
    FeedbackFact,
    OwnerOutcomeFact,
    PassFact,
    ReportFact,
    RunFact,
)
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
        runs=tuple(run for run in map(run_or_none, found["runs"]) if run is not None),
        owner_outcomes=tuple(
            OwnerOutcomeFact(
                r["outcome_id"], r["run_id"], r["draft_id"], OwnerVerdict(r["verdict"])
            )
            for r in found["outcomes"]
        ),
        passes=tuple(p for row in found["passes"] for p in pass_fact(row)),
        read=tuple(read),
        unreadable=tuple(unreadable),
        damaged_runs=sum(1 for row in found["runs"] if run_or_none(row) is None),
    )


def run_or_none(row: asyncpg.Record) -> RunFact | None:
    """A run row, or None when it cannot be read: counted as missing, never dropped (M54)."""
    try:
        return run_fact(row)
    except ValueError:
        return None


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
    items = RunItems.model_validate_json(row["items"])
    return RunFact(
        run_id=row["run_id"],
        agent=row["agent"],
        completed_at=row["completed_at"],
        development=row["development"],
        counters=None if counters is None else RunCounters.model_validate_json(counters),
        serves=read_goal_refs(json.loads(row["serves"])),
        succeeded=row["succeeded"],
        surface=row["surface"],
        compacted=row["compacted"],
        drafts=tuple(items.drafts),
        questions=tuple(items.questions),
        stops=tuple(items.stops),
        steps=tuple(items.steps),
        requests=tuple(items.requests),
    )


class RunItems(BaseModel):
    """A run's drafts, questions, stops, steps and requests as the read model keeps them (a
    row written before requests were reported has none)."""

    drafts: list[RunDraft] = []
    questions: list[RunQuestion] = []
    stops: list[OwnerStop] = []
    steps: list[RunStep] = []
    requests: list[RunRequest] = []


def pass_fact(row: asyncpg.Record) -> tuple[PassFact, ...]:
    return tuple(
        PassFact(row["run_id"], row["kind"], r["cite"], r["result"], float(r.get("sign", 0.0)),
                 r.get("agency", "self"), bool(r.get("visible", False)))
        for r in json.loads(row["results"])
    )  # fmt: skip


# ---- What the sensors watch (SPEC M20): each an honest sample or unreadable ----------------


async def sample_requests(pool: asyncpg.Pool, tenant_id: str, now: datetime) -> Sample:
    """request_closure: reports still open (New in the Inbox), and the oldest one's wait — a
    lower bound of its time to Resolved."""
    return await queue_sample(inbox.waiting_new(pool, tenant_id), now)


async def queue_sample(queue: Awaitable[tuple[int, datetime | None]], now: datetime) -> Sample:
    """A queue's length and its oldest item's wait, as ``queue`` reads them; unreadable if
    its read model cannot be read."""
    try:
        waiting, oldest = await queue
    except UNREADABLE:
        return Sample(readable=False)
    wait = None if oldest is None else max((now - oldest).total_seconds(), 0.0)
    return Sample(waiting=waiting, oldest_wait=wait)


async def sample_runtime(
    pool: asyncpg.Pool, tenant_id: str, now: datetime
) -> tuple[Sample, Sample]:
    """The agents' outbox and questions (decisions D35): each agent's latest run says how many
    drafts wait pending and questions parked, and since when. No run that measured it: the
    store is not read, which is never zero (M20)."""
    try:
        rows = await facts_model.agents_outbox(pool, tenant_id)
    except UNREADABLE:
        return Sample(readable=False), Sample(readable=False)
    return (
        runtime_sample(rows, "pending", "oldest_draft", now),
        runtime_sample(rows, "parked", "oldest_question", now),
    )


def runtime_sample(rows: list[Any], count: str, oldest: str, now: datetime) -> Sample:
    measured = [row for row in rows if row[count] is not None]
    if not measured:
        return Sample(readable=False)
    waiting = sum(int(row[count]) for row in measured)
    instants = [datetime.fromisoformat(row[oldest]) for row in measured if row[oldest]]
    wait = max((now - min(instants)).total_seconds(), 0.0) if instants else None
    return Sample(waiting=waiting, oldest_wait=wait)


async def sample_interventions(
    pool: asyncpg.Pool, tenant_id: str, since: datetime | None
) -> Sample:
    """intervention_rate: appraised runs since ``since`` and how many had an escalation or
    a correction."""
    try:
        runs, intervened = await facts_model.intervened_runs(pool, tenant_id, since)
    except UNREADABLE:
        return Sample(readable=False)
    return Sample(runs=runs, hits=intervened)
