"""The appraisal read model: the facts appraisals are derived from, never a verdict.

Rows hold what was recorded — feedback on a run, a report's kind, reach and review, an eval
run's verdict, a neighbour's RunCompleted with its counters, the tenant's charter as parsed at
the door — and nothing derived: no sign, no label. The derivation runs when a reader asks
(``services/appraisal/reads.py`` → ``services/appraisal/appraise.py``), so a change to the
contribution table reads over all past runs without a migration or a rebuild.

RunCompleted reaches the store through the datasets context's handler, whose event carries the
received model in its ``run`` field; ``run_of`` reads it from any such event. The harvest is
followed by default; a test may name other events that carry a run (``run_events``).
"""

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import asyncpg

from contracts.neighbours import RunCompleted, RunOutcome
from contracts.report_facts import block_of
from projections import events as ev
from projections.read_model import insert_rows
from services.followers.reader import Connection, Positioned

SCHEMA = "rm_appraisal"
REVIEW_STATES = {ev.REPORT_TRIAGED: "Triaged", ev.REPORT_WONT_FIX: "WontFix"}


def run_of(event: object) -> RunCompleted | None:
    """The RunCompleted an event recorded (its ``run`` field), read tolerantly: a model, or
    the model's JSON as stored; anything else is no run."""
    run = getattr(event, "run", None)
    if isinstance(run, RunCompleted):
        return run
    if isinstance(run, dict):
        try:
            return RunCompleted.model_validate(run)
        except ValueError:
            return None
    return None


def serves_of(event: object) -> str:
    """A recorded ``serves`` as stored (read back tolerantly later, M05); older events: []."""
    serves = getattr(event, "serves", None)
    if not serves or not isinstance(serves, list):
        return "[]"  # most feedback serves no line: no encoding for it (a rebuild's bulk)
    return json.dumps([s for s in serves if isinstance(s, str)])


class AppraisalFacts:
    name = "appraisal"
    insert_only = ("feedback",)  # a rebuild adds its key after loading (services.projecting.runner)
    order_free = (ev.FEEDBACK_RECORDED,)  # a feedback row or none: loaded apart

    def __init__(self, run_events: Sequence[str | type] = (ev.RUN_HARVESTED,)) -> None:
        self.run_events = ev.topics(tuple(run_events))

    @property
    def handles(self) -> tuple[str, ...]:
        return (
            ev.FEEDBACK_RECORDED,
            ev.REPORT_DRAFTED,
            ev.REPORT_SUBMITTED,
            ev.REPORT_HANDED_OVER,
            ev.REPORT_TRIAGED,
            ev.REPORT_RESOLVED,
            ev.REPORT_WONT_FIX,
            ev.REPORT_DELIVERY_FAILED,
            ev.CASE_RUN_RECORDED,
            ev.CHARTER_ADOPTED,
            ev.CHARTER_AMENDED,
            ev.OWNER_OUTCOME_RECORDED,
            ev.OWNER_OUTCOME_WITHDRAWN,
            ev.PASS_RECORDED,
            ev.CLOSURE_NOTED,
            ev.CLOSURE_APPRAISED,
            *self.run_events,
        )

    def ddl(self, schema: str) -> str:
        # Feedback is read by run, and its key leads with the run: one index to build and keep
        # up, not two. Its feedback_id is a uuid, as the event holds it: no text to make of
        # every feedback a rebuild writes.
        return f"""
        CREATE TABLE IF NOT EXISTS {schema}.charters (
            tenant_id text PRIMARY KEY, document text NOT NULL, lines jsonb NOT NULL,
            findings jsonb NOT NULL, written_by text NOT NULL, written_at timestamptz NOT NULL
        );
        CREATE TABLE IF NOT EXISTS {schema}.feedback (
            feedback_id uuid NOT NULL, tenant_id text NOT NULL, run_id text NOT NULL,
            kind text NOT NULL, rating integer, serves jsonb NOT NULL, at timestamptz NOT NULL,
            PRIMARY KEY (tenant_id, run_id, feedback_id)
        );
        CREATE TABLE IF NOT EXISTS {schema}.reports (
            report_id text PRIMARY KEY, tenant_id text NOT NULL, run_id text, agent text,
            category text NOT NULL, kind text, reached boolean NOT NULL, serves jsonb NOT NULL,
            status text NOT NULL, submitted_at timestamptz,
            resolved_with_change boolean NOT NULL DEFAULT false
        );
        CREATE TABLE IF NOT EXISTS {schema}.eval_runs (
            run_id text PRIMARY KEY, tenant_id text NOT NULL, agent text NOT NULL,
            passed boolean NOT NULL, invented boolean NOT NULL, at timestamptz NOT NULL
        );
        CREATE TABLE IF NOT EXISTS {schema}.runs (
            tenant_id text NOT NULL, run_id text NOT NULL, agent text NOT NULL,
            development boolean NOT NULL, counters jsonb, serves jsonb NOT NULL,
            completed_at timestamptz NOT NULL, surface text, succeeded boolean NOT NULL,
            compacted boolean NOT NULL, items jsonb NOT NULL, PRIMARY KEY (tenant_id, run_id)
        );
        CREATE TABLE IF NOT EXISTS {schema}.owner_outcomes (
            tenant_id text NOT NULL, draft_id text NOT NULL, outcome_id text NOT NULL,
            run_id text NOT NULL, verdict text NOT NULL, at timestamptz NOT NULL,
            PRIMARY KEY (tenant_id, draft_id)
        );
        CREATE TABLE IF NOT EXISTS {schema}.passes (
            tenant_id text NOT NULL, run_id text NOT NULL, kind text NOT NULL,
            results jsonb NOT NULL, at timestamptz NOT NULL, PRIMARY KEY (tenant_id, run_id, kind)
        );
        CREATE TABLE IF NOT EXISTS {schema}.closures (
            closure_id uuid PRIMARY KEY, tenant_id text NOT NULL, transition_id text NOT NULL,
            task_id text NOT NULL, status text NOT NULL, run_ids jsonb NOT NULL,
            closed_at timestamptz NOT NULL, label text, follow_up boolean
        );
        """

    def indexes(self, schema: str) -> str:
        """Secondary indexes: a rebuild makes them after loading
        (``services.projecting.runner``)."""
        return f"""
        CREATE INDEX IF NOT EXISTS reports_by_run ON {schema}.reports (tenant_id, run_id);
        CREATE INDEX IF NOT EXISTS reports_by_agent ON {schema}.reports (tenant_id, agent);
        CREATE INDEX IF NOT EXISTS eval_runs_by_agent ON {schema}.eval_runs (tenant_id, agent);
        CREATE INDEX IF NOT EXISTS runs_by_agent ON {schema}.runs (tenant_id, agent);
        """

    async def apply(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        # Feedback rows are only ever inserted, and nothing else in the batch reads them: they
        # are written together at the end, in bulk (a catch-up's pages are mostly feedback).
        feedback: list[tuple[Any, ...]] = []
        for p in batch:
            e = p.event
            topic = ev.topic_of(e)
            match topic:
                case ev.CHARTER_ADOPTED | ev.CHARTER_AMENDED:
                    await conn.execute(
                        f"INSERT INTO {schema}.charters VALUES ($1, $2, $3, $4, $5, $6) "
                        "ON CONFLICT (tenant_id) DO UPDATE SET document = $2, lines = $3, "
                        "findings = $4, written_by = $5, written_at = $6",
                        e.tenant_id, e.document, json.dumps(e.lines), json.dumps(e.findings),
                        e.written_by, e.timestamp,
                    )  # fmt: skip
                case ev.FEEDBACK_RECORDED:
                    if e.subject_kind != "run":
                        continue  # appraisal reads feedback on runs only
                    feedback.append((
                        e.originator_id, e.tenant_id, e.subject_ref, e.kind, e.rating,
                        serves_of(e), e.timestamp,
                    ))  # fmt: skip
                case ev.REPORT_DRAFTED:
                    await self.drafted(conn, schema, e)
                case ev.REPORT_SUBMITTED | ev.REPORT_HANDED_OVER:
                    status = "New" if topic == ev.REPORT_SUBMITTED else "HandedOver"
                    await self.report(conn, schema, e, status=status, submitted_at=e.timestamp)
                case ev.REPORT_DELIVERY_FAILED:
                    await self.report(conn, schema, e, status="New")
                case ev.REPORT_TRIAGED | ev.REPORT_WONT_FIX:
                    await self.report(conn, schema, e, status=REVIEW_STATES[topic])
                case ev.REPORT_RESOLVED:
                    change = bool(e.change or e.link)  # the reporter was told what changed
                    await self.report(
                        conn, schema, e, status="Resolved", resolved_with_change=change
                    )
                case ev.CASE_RUN_RECORDED:
                    summary = e.summary
                    invented = summary.get("not_invented", 0) < summary.get("scored", 0)
                    await conn.execute(
                        f"INSERT INTO {schema}.eval_runs VALUES ($1, $2, $3, $4, $5, $6) "
                        "ON CONFLICT DO NOTHING",
                        e.run_id, e.tenant_id, e.agent, bool(summary.get("passed")), invented,
                        e.timestamp,
                    )  # fmt: skip
                case ev.OWNER_OUTCOME_RECORDED:  # one active outcome per draft (M33)
                    await conn.execute(
                        f"INSERT INTO {schema}.owner_outcomes VALUES ($1, $2, $3, $4, $5, $6) "
                        "ON CONFLICT (tenant_id, draft_id) DO UPDATE SET outcome_id = $3, "
                        "run_id = $4, verdict = $5, at = $6",
                        e.tenant_id, e.draft_id, e.outcome_id, e.run_id, e.verdict, e.timestamp,
                    )  # fmt: skip
                case ev.OWNER_OUTCOME_WITHDRAWN:
                    await conn.execute(
                        f"DELETE FROM {schema}.owner_outcomes WHERE tenant_id = $1 "
                        "AND draft_id = $2 AND outcome_id = $3",
                        e.tenant_id, e.draft_id, e.withdrawn,
                    )  # fmt: skip
                case ev.PASS_RECORDED:
                    await conn.execute(
                        f"INSERT INTO {schema}.passes VALUES ($1, $2, $3, $4, $5) "
                        "ON CONFLICT DO NOTHING",
                        e.tenant_id, e.run_id, e.kind, json.dumps(e.results), e.timestamp,
                    )  # fmt: skip
                case ev.CLOSURE_NOTED:
                    await conn.execute(
                        f"INSERT INTO {schema}.closures VALUES ($1, $2, $3, $4, $5, $6, $7) "
                        "ON CONFLICT DO NOTHING",
                        e.originator_id, e.tenant_id, e.transition_id, e.task_id, e.status,
                        json.dumps(e.run_ids), e.closed_at,
                    )  # fmt: skip
                case ev.CLOSURE_APPRAISED:
                    await conn.execute(
                        f"UPDATE {schema}.closures SET label = $2, follow_up = $3 "
                        "WHERE closure_id = $1",
                        e.originator_id, e.label, e.follow_up,
                    )  # fmt: skip
                case _ if (run := run_of(e)) is not None:
                    await self.completed(conn, schema, e, run)
                case _:
                    raise TypeError(f"appraisal does not handle {type(e).__name__}")
        columns = ("feedback_id", "tenant_id", "run_id", "kind", "rating", "serves", "at")
        await insert_rows(conn, f"{schema}.feedback", columns, feedback, conflict="")

    @staticmethod
    async def drafted(conn: Connection, schema: str, e: Any) -> None:
        block = block_of(e.facts)
        reached = bool(e.message_ref or (block and (block.message or block.answer_excerpt)))
        await conn.execute(
            f"INSERT INTO {schema}.reports (report_id, tenant_id, run_id, agent, category, kind, "
            "reached, serves, status) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'Draft') "
            "ON CONFLICT DO NOTHING",
            str(e.originator_id), e.tenant_id, e.thread or (block.thread if block else None),
            block.agent if block else None, e.category, block.kind if block else None,
            reached, serves_of(e),
        )  # fmt: skip

    @staticmethod
    async def report(conn: Connection, schema: str, e: Any, **values: Any) -> None:
        columns = ", ".join(f"{name} = ${i}" for i, name in enumerate(values, start=2))
        await conn.execute(
            f"UPDATE {schema}.reports SET {columns} WHERE report_id = $1",
            str(e.originator_id),
            *values.values(),
        )

    @staticmethod
    async def completed(conn: Connection, schema: str, e: Any, run: RunCompleted) -> None:
        counters = None if run.counters is None else run.counters.model_dump_json(by_alias=True)
        items = run.model_dump_json(
            by_alias=True, include={"drafts", "questions", "stops", "steps"}
        )
        await conn.execute(
            f"INSERT INTO {schema}.runs VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) "
            "ON CONFLICT DO NOTHING",
            getattr(e, "tenant_id", ""), run.run_id, run.agent_id, run.development, counters,
            json.dumps(list(run.serves)), run.completed_at, run.surface,
            run.outcome is RunOutcome.succeeded, run.compacted, items,
        )  # fmt: skip


# Queries: the rows as recorded (what they mean is the appraisal context's). The sources of
# facts, each read on its own: one may be unreadable while the others are not.
FACT_SOURCES = ("feedback", "reports", "evals", "runs", "outcomes", "passes")


async def charter_row(
    pool: asyncpg.Pool, tenant_id: str, schema: str = SCHEMA
) -> asyncpg.Record | None:
    """The tenant's charter as parsed at the door (``document, lines, findings, written_by,
    written_at``; lines and findings as JSON text), or None when none was written."""
    return await pool.fetchrow(
        f"SELECT document, lines, findings, written_by, written_at FROM {schema}.charters "
        "WHERE tenant_id = $1",
        tenant_id,
    )


async def charter_line_ids(
    pool: asyncpg.Pool, tenant_id: str, schema: str = SCHEMA
) -> tuple[str, ...]:
    """The ids of the tenant's charter lines, in rank order; none without a charter."""
    row = await charter_row(pool, tenant_id, schema)
    return () if row is None else tuple(str(line["id"]) for line in json.loads(row["lines"]))


def window(column: str, first: int) -> str:
    return (
        f" AND (${first}::timestamptz IS NULL OR {column} >= ${first})"
        f" AND (${first + 1}::timestamptz IS NULL OR {column} < ${first + 1})"
    )


def fact_query(source: str, schema: str) -> str:
    """One source's rows of a tenant ($1), a run ($2) or an agent ($3), in a window ($4, $5)."""
    runs_of_agent = f"(SELECT run_id FROM {schema}.runs WHERE tenant_id = $1 AND agent = $3)"
    match source:
        case "feedback":
            return (
                f"SELECT * FROM {schema}.feedback WHERE tenant_id = $1 "
                "AND ($2::text IS NULL OR run_id = $2) "
                f"AND ($3::text IS NULL OR run_id IN {runs_of_agent})" + window("at", 4)
            )
        case "reports":  # submitted answer reports with a kind: the ones that sign an outcome
            return (
                f"SELECT * FROM {schema}.reports WHERE tenant_id = $1 "
                "AND submitted_at IS NOT NULL AND (kind IS NOT NULL OR category = 'answer') "
                "AND ($2::text IS NULL OR run_id = $2) AND ($3::text IS NULL OR agent = $3)"
                + window("submitted_at", 4)
            )
        case "evals":
            return (
                f"SELECT * FROM {schema}.eval_runs WHERE tenant_id = $1 "
                "AND ($2::text IS NULL OR run_id = $2) AND ($3::text IS NULL OR agent = $3)"
                + window("at", 4)
            )
        case "runs":
            return (
                f"SELECT * FROM {schema}.runs WHERE tenant_id = $1 "
                "AND ($2::text IS NULL OR run_id = $2) AND ($3::text IS NULL OR agent = $3)"
                + window("completed_at", 4)
            )
        case "outcomes" | "passes":  # of the runs in scope, whenever recorded
            table = "owner_outcomes" if source == "outcomes" else "passes"
            return (
                f"SELECT * FROM {schema}.{table} WHERE tenant_id = $1 "
                "AND ($2::text IS NULL OR run_id = $2) "
                f"AND ($3::text IS NULL OR run_id IN {runs_of_agent}) AND run_id IN "
                f"(SELECT run_id FROM {schema}.runs WHERE tenant_id = $1"
                + window("completed_at", 4)
                + ")"
            )
    raise ValueError(f"no source of facts named {source!r}")


async def fact_rows(
    pool: asyncpg.Pool,
    tenant_id: str,
    source: str,
    *,
    run_id: str | None,
    agent: str | None,
    since: datetime | None,
    until: datetime | None,
    limit: int,
    schema: str = SCHEMA,
) -> list[asyncpg.Record]:
    """At most ``limit`` rows of one of ``FACT_SOURCES``, of the tenant's run ``run_id``, agent
    ``agent`` or of all of its runs, recorded in ``[since, until)``. Raises if unreadable."""
    return await pool.fetch(
        f"{fact_query(source, schema)} LIMIT {int(limit)}",
        tenant_id, run_id, agent, since, until,
    )  # fmt: skip


async def eval_runs_since(
    pool: asyncpg.Pool, tenant_id: str, since: datetime | None, schema: str = SCHEMA
) -> tuple[int, int]:
    """The tenant's eval runs since ``since``, and how many of them failed."""
    row = await pool.fetchrow(
        f"SELECT count(*) AS runs, count(*) FILTER (WHERE NOT passed) AS failed "
        f"FROM {schema}.eval_runs WHERE tenant_id = $1 "
        "AND ($2::timestamptz IS NULL OR at >= $2)",
        tenant_id,
        since,
    )
    return (0, 0) if row is None else (row["runs"], row["failed"])


async def agents_outbox(
    pool: asyncpg.Pool, tenant_id: str, schema: str = SCHEMA
) -> list[asyncpg.Record]:
    """Each agent's latest appraised run's outbox and questions, as it reported them
    (``pendingDrafts``, ``oldestPendingDraftAt``, ``parkedQuestions``,
    ``oldestParkedQuestionAt``; null where that run did not measure them)."""
    return await pool.fetch(
        f"SELECT DISTINCT ON (agent) agent, counters->>'pendingDrafts' AS pending, "
        "counters->>'oldestPendingDraftAt' AS oldest_draft, "
        "counters->>'parkedQuestions' AS parked, "
        "counters->>'oldestParkedQuestionAt' AS oldest_question "
        f"FROM {schema}.runs WHERE tenant_id = $1 AND NOT development "
        "ORDER BY agent, completed_at DESC",
        tenant_id,
    )


async def intervened_runs(
    pool: asyncpg.Pool, tenant_id: str, since: datetime | None, schema: str = SCHEMA
) -> tuple[int, int]:
    """The tenant's appraised runs since ``since``, and how many of them had an escalation or
    a correction (the intervention_rate sensor, decisions D35)."""
    row = await pool.fetchrow(
        f"SELECT count(*) AS runs, count(*) FILTER (WHERE EXISTS (SELECT 1 FROM "
        f"{schema}.feedback f WHERE f.tenant_id = r.tenant_id AND f.run_id = r.run_id "
        "AND f.kind IN ('escalation', 'correction'))) AS intervened "
        f"FROM {schema}.runs r WHERE r.tenant_id = $1 AND NOT r.development "
        "AND ($2::timestamptz IS NULL OR r.completed_at >= $2)",
        tenant_id,
        since,
    )
    return (0, 0) if row is None else (row["runs"], row["intervened"])


async def latest_runs(
    pool: asyncpg.Pool, tenant_id: str, count: int, schema: str = SCHEMA
) -> list[asyncpg.Record]:
    """The tenant's last ``count`` appraised runs, newest first (``completed_at``,
    ``counters`` as JSON text)."""
    return await pool.fetch(
        f"SELECT run_id, agent, completed_at, counters FROM {schema}.runs "
        "WHERE tenant_id = $1 AND NOT development ORDER BY completed_at DESC LIMIT $2",
        tenant_id,
        count,
    )


async def open_closures(
    pool: asyncpg.Pool, tenant_id: str, limit: int, schema: str = SCHEMA
) -> list[asyncpg.Record]:
    """Closed-task transitions noted but not yet appraised (``transition_id``, ``task_id``,
    ``status``, ``run_ids`` as JSON text), oldest first."""
    return await pool.fetch(
        f"SELECT transition_id, task_id, status, run_ids FROM {schema}.closures "
        "WHERE tenant_id = $1 AND label IS NULL ORDER BY closed_at LIMIT $2",
        tenant_id,
        limit,
    )


async def tenants_with_open_closures(pool: asyncpg.Pool, schema: str = SCHEMA) -> list[str]:
    """The tenants with a closed-task transition noted and not yet appraised."""
    rows = await pool.fetch(
        f"SELECT DISTINCT tenant_id FROM {schema}.closures WHERE label IS NULL ORDER BY 1"
    )
    return [row["tenant_id"] for row in rows]


async def closure_row(
    pool: asyncpg.Pool, tenant_id: str, transition_id: str, schema: str = SCHEMA
) -> asyncpg.Record | None:
    """One transition's closure (``task_id``, ``status``, ``label``, ``follow_up``)."""
    return await pool.fetchrow(
        f"SELECT task_id, status, label, follow_up FROM {schema}.closures "
        "WHERE tenant_id = $1 AND transition_id = $2",
        tenant_id,
        transition_id,
    )
