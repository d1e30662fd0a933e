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
from typing import Any

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
            by_alias=True, include={"drafts", "questions", "stops", "steps", "requests"}
        )
        await conn.execute(
            f"INSERT INTO {schema}.runs VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) "
            "ON CONFLICT DO NOTHING",
            getattr(e, "tenant_id", ""), run.run_id, run.agent_id, run.development, counters,
            json.dumps(list(run.serves)), run.completed_at, run.surface,
            run.outcome is RunOutcome.succeeded, run.compacted, items,
        )  # fmt: skip
