"""The appraisal read model: the facts appraisals are derived from, never a verdict (issue 11).

Rows hold what was recorded — feedback on a run, a report's kind, reach and review, an eval
run's verdict, a neighbour's RunCompleted with its counters, the tenant's charter as parsed at
the door — and nothing derived: no sign, no label. The derivation runs when a reader asks
(``projections/appraisal_reads.py`` → ``services/appraisal/appraise.py``), so a change to the
contribution table reads over all past runs without a migration or a rebuild.

RunCompleted reaches the store through the datasets context's handler, whose event carries the
received model in its ``run`` field; ``run_of`` reads it from any such event, and the classes
to follow are given at construction (``run_events``) so this module names none of them.
"""

import json
from collections.abc import Sequence
from typing import Any

from contracts.neighbours import RunCompleted
from projections.read_model import insert_rows
from services.appraisal.domain import TenantCharter
from services.evals.domain import EvalCase
from services.feedback.domain import Feedback
from services.followers.reader import Connection, Positioned
from services.reports.domain import Report
from services.reports.facts import block_of

REVIEW_STATES = {Report.Triaged: "Triaged", Report.WontFix: "WontFix"}


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
    order_free = (
        Feedback.Recorded,
    )  # a feedback row or none: loaded apart (services.projecting.apart)

    def __init__(self, run_events: Sequence[type] = ()) -> None:
        self.run_events = tuple(run_events)

    @property
    def handles(self) -> tuple[type, ...]:
        return (
            Feedback.Recorded,
            Report.Drafted,
            Report.Submitted,
            Report.HandedOver,
            Report.Triaged,
            Report.Resolved,
            Report.WontFix,
            Report.HandOverDeliveryFailed,
            EvalCase.RunRecorded,
            TenantCharter.Adopted,
            TenantCharter.Amended,
            *self.run_events,
        )

    def ddl(self, schema: str) -> str:
        # Feedback is read by run, and its key leads with the run: one index to build and keep
        # up, not two (issue 12). Schemas made before it (keyed on feedback_id alone) keep their
        # index by run until a rebuild replaces them; the inserts name no conflict target.
        # Their feedback_id was text (turning each uuid into it was about 5 % of a rebuild
        # worker's CPU): it becomes a uuid once, in place (a rewrite, the table locked while
        # it runs; the text is each uuid's own). asyncpg writes a uuid from its text too, so a
        # process of the version before goes on writing to it.
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
        DO $$ BEGIN
            IF (SELECT atttypid FROM pg_attribute WHERE attname = 'feedback_id'
                AND attrelid = '{schema}.feedback'::regclass) = 'text'::regtype THEN
                ALTER TABLE {schema}.feedback
                    ALTER COLUMN feedback_id TYPE uuid USING feedback_id::uuid;
            END IF;
        END $$;
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
            completed_at timestamptz NOT NULL, PRIMARY KEY (tenant_id, run_id)
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
            match e:
                case TenantCharter.Adopted() | TenantCharter.Amended():
                    await conn.execute(
                        f"INSERT INTO {schema}.charters VALUES ($1, $2, $3, $4, $5, $6) "
                        "ON CONFLICT (tenant_id) DO UPDATE SET document = $2, lines = $3, "
                        "findings = $4, written_by = $5, written_at = $6",
                        e.tenant_id, e.document, json.dumps(e.lines), json.dumps(e.findings),
                        e.written_by, e.timestamp,
                    )  # fmt: skip
                case Feedback.Recorded():
                    if e.subject_kind != "run":
                        continue  # appraisal reads feedback on runs only
                    feedback.append((
                        e.originator_id, e.tenant_id, e.subject_ref, e.kind, e.rating,
                        serves_of(e), e.timestamp,
                    ))  # fmt: skip
                case Report.Drafted():
                    await self.drafted(conn, schema, e)
                case Report.Submitted() | Report.HandedOver():
                    status = "New" if isinstance(e, Report.Submitted) else "HandedOver"
                    await self.report(conn, schema, e, status=status, submitted_at=e.timestamp)
                case Report.HandOverDeliveryFailed():
                    await self.report(conn, schema, e, status="New")
                case Report.Triaged() | Report.WontFix():
                    await self.report(conn, schema, e, status=REVIEW_STATES[type(e)])
                case Report.Resolved():
                    change = bool(e.change or e.link)  # the reporter was told what changed
                    await self.report(
                        conn, schema, e, status="Resolved", resolved_with_change=change
                    )
                case EvalCase.RunRecorded():
                    summary = e.summary
                    invented = summary.get("not_invented", 0) < summary.get("scored", 0)
                    await conn.execute(
                        f"INSERT INTO {schema}.eval_runs VALUES ($1, $2, $3, $4, $5, $6) "
                        "ON CONFLICT DO NOTHING",
                        e.run_id, e.tenant_id, e.agent, bool(summary.get("passed")), invented,
                        e.timestamp,
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
        await conn.execute(
            f"INSERT INTO {schema}.runs VALUES ($1, $2, $3, $4, $5, $6, $7) "
            "ON CONFLICT DO NOTHING",
            getattr(e, "tenant_id", ""), run.run_id, run.agent_id, run.development, counters,
            json.dumps(list(run.serves)), run.completed_at,
        )  # fmt: skip
