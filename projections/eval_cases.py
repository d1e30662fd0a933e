"""Eval cases by agent: definition, confirmation, last run, pass/fail and the run history.

Answers ``GET /factory/evals/cases`` and ``GET /factory/evals/cases/{id}``; tenant-scoped.
Runs compare only within one runner (``contracts.runners``, SPEC W58): a case keeps its last
run of each runner beside the newest of all, and its pass-rate history is one line per runner.
"""

import json
from collections.abc import Sequence
from typing import Any
from uuid import UUID

import asyncpg

from contracts.runners import RunnerKey, runner_of
from projections import events as ev
from services.followers.reader import Connection, Positioned

SCHEMA = "rm_eval_cases"


class EvalCases:
    name = "eval_cases"
    handles = (
        ev.CASE_LIFTED,
        ev.CASE_PATCHED,
        ev.CASE_CONFIRMED,
        ev.CASE_UNCONFIRMED,
        ev.CASE_RUN_RECORDED,
    )

    def ddl(self, schema: str) -> str:
        return f"""
        CREATE TABLE IF NOT EXISTS {schema}.cases (
            case_id uuid PRIMARY KEY,
            tenant_id text NOT NULL,
            ref text NOT NULL,
            source uuid NOT NULL,
            agent text NOT NULL,
            definition jsonb NOT NULL,
            confirmed_by text,
            last_run jsonb,
            passed boolean,
            last_runs jsonb NOT NULL DEFAULT '{{}}',
            lifted_at timestamptz NOT NULL,
            position bigint NOT NULL
        );
        CREATE TABLE IF NOT EXISTS {schema}.runs (
            run_id uuid PRIMARY KEY,
            case_id uuid NOT NULL,
            tenant_id text NOT NULL,
            ran_by text NOT NULL,
            model text,
            effort text NOT NULL,
            night text,
            summary jsonb NOT NULL,
            threads jsonb NOT NULL,
            recorded_at timestamptz NOT NULL,
            position bigint NOT NULL
        );
        """

    def indexes(self, schema: str) -> str:
        return f"""
        CREATE INDEX IF NOT EXISTS cases_by_agent ON {schema}.cases (tenant_id, agent, ref);
        CREATE INDEX IF NOT EXISTS runs_by_case ON {schema}.runs (case_id, position DESC);
        CREATE INDEX IF NOT EXISTS runs_by_tenant ON {schema}.runs (tenant_id, position DESC);
        """

    async def apply(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        for p in batch:
            e = p.event
            match ev.topic_of(e):
                case ev.CASE_LIFTED:
                    definition = {
                        "prompt": e.prompt,
                        "context": e.context,
                        "mustGround": e.must_ground,
                        "mustNotAssert": e.must_not_assert,
                        "mustAssert": e.must_assert,
                        "model": e.model,
                    }
                    await conn.execute(
                        f"INSERT INTO {schema}.cases (case_id, tenant_id, ref, source, agent, "
                        "definition, lifted_at, position) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
                        "ON CONFLICT (case_id) DO NOTHING",
                        e.originator_id, e.tenant_id, e.ref, UUID(e.source), e.agent,
                        json.dumps(definition), e.timestamp, p.position,
                    )  # fmt: skip
                case ev.CASE_PATCHED:
                    changes = {CAMEL[name]: value for name, value in e.changes.items()}
                    await conn.execute(
                        f"UPDATE {schema}.cases SET definition = definition || $2::jsonb, "
                        "position = $3 WHERE case_id = $1",
                        e.originator_id, json.dumps(changes), p.position,
                    )  # fmt: skip
                case ev.CASE_CONFIRMED | ev.CASE_UNCONFIRMED:
                    await conn.execute(
                        f"UPDATE {schema}.cases SET confirmed_by = $2, position = $3 "
                        "WHERE case_id = $1",
                        e.originator_id, getattr(e, "confirmed_by", None), p.position,
                    )  # fmt: skip
                case ev.CASE_RUN_RECORDED:
                    night = getattr(e, "night", None)  # W102
                    runner = runner_of(night)
                    run = {
                        "runId": e.run_id, "ranBy": e.ran_by, "runner": runner,
                        "model": e.model, "effort": e.effort, "summary": e.summary,
                        "threads": e.threads, "recordedAt": e.timestamp.isoformat(),
                        "position": p.position, "night": night,
                    }  # fmt: skip
                    await conn.execute(
                        f"INSERT INTO {schema}.runs (run_id, case_id, tenant_id, ran_by, model, "
                        "effort, night, summary, threads, recorded_at, position) VALUES ($1, $2, "
                        "$3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (run_id) DO NOTHING",
                        UUID(e.run_id), e.originator_id, e.tenant_id, e.ran_by, e.model,
                        e.effort, night, json.dumps(e.summary), json.dumps(e.threads),
                        e.timestamp, p.position,
                    )  # fmt: skip
                    # W58: the newest of all, and the newest of this runner (a runner's own).
                    key = RunnerKey(runner, e.ran_by).text
                    await conn.execute(
                        f"UPDATE {schema}.cases SET last_run = $2, passed = $3, position = $4, "
                        "last_runs = last_runs || jsonb_build_object($5::text, $2::jsonb) "
                        "WHERE case_id = $1",
                        e.originator_id, json.dumps(run), bool(e.summary["passed"]), p.position,
                        key,
                    )  # fmt: skip
                case _:
                    raise TypeError(f"eval cases do not handle {type(e).__name__}")


CAMEL = {
    "prompt": "prompt",
    "context": "context",
    "must_ground": "mustGround",
    "must_not_assert": "mustNotAssert",
    "must_assert": "mustAssert",
    "model": "model",
}


def last_runs(row: asyncpg.Record) -> list[dict[str, Any]]:
    """The case's last run of each runner, newest first."""
    runs: list[dict[str, Any]] = list(json.loads(row["last_runs"]).values())
    return sorted(runs, key=lambda run: run["position"], reverse=True)


def case_json(row: asyncpg.Record) -> dict[str, Any]:
    return {
        "caseId": str(row["case_id"]),
        "ref": row["ref"],
        "source": str(row["source"]),
        "agent": row["agent"],
        **json.loads(row["definition"]),
        "confirmedBy": row["confirmed_by"],
        "lastRun": json.loads(row["last_run"]) if row["last_run"] else None,
        "lastRuns": last_runs(row),
        "passed": row["passed"],
        "liftedAt": row["lifted_at"].isoformat(),
        "position": row["position"],
    }


async def list_cases(
    pool: asyncpg.Pool,
    tenant_id: str,
    *,
    agent: str | None = None,
    confirmed: bool | None = None,
    schema: str = SCHEMA,
) -> list[dict[str, Any]]:
    """Every case (ordered by agent, then ref): what a night is planned from."""
    rows = await pool.fetch(
        f"SELECT * FROM {schema}.cases WHERE tenant_id = $1 AND ($2::text IS NULL OR agent = $2) "
        "AND ($3::boolean IS NULL OR (confirmed_by IS NOT NULL) = $3) ORDER BY agent, ref",
        tenant_id,
        agent,
        confirmed,
    )
    return [case_json(row) for row in rows]


async def page_cases(
    pool: asyncpg.Pool,
    tenant_id: str,
    *,
    agent: str | None = None,
    confirmed: bool | None = None,
    after: UUID | None = None,
    limit: int = 50,
    schema: str = SCHEMA,
) -> tuple[list[dict[str, Any]], UUID | None]:
    """Cases grouped by agent (ordered by agent, then ref), a page at a time: those after the
    case ``after``, at most ``limit``; and the case to pass as ``after`` for the next page
    (None on the last). The cursor is the last case's id: its agent and ref never change and
    a case is never removed, so its place in the order is read back from its row (keeping
    the cursor short whatever the agent's length)."""
    rows = await pool.fetch(
        f"SELECT * FROM {schema}.cases WHERE tenant_id = $1 AND ($2::text IS NULL OR agent = $2) "
        "AND ($3::boolean IS NULL OR (confirmed_by IS NOT NULL) = $3) "
        "AND ($4::uuid IS NULL OR (agent, ref, case_id) > "
        f"(SELECT agent, ref, case_id FROM {schema}.cases WHERE tenant_id = $1 AND case_id = $4)) "
        "ORDER BY agent, ref, case_id LIMIT $5",
        tenant_id,
        agent,
        confirmed,
        after,
        limit + 1,
    )
    page = rows[:limit]
    return [case_json(row) for row in page], (page[-1]["case_id"] if len(rows) > limit else None)


async def get_thread(
    pool: asyncpg.Pool,
    tenant_id: str,
    case_id: UUID,
    run_id: UUID,
    index: int,
    schema: str = SCHEMA,
) -> dict[str, Any] | None:
    """One conversation of a run: what was asked, what the agent answered, how it scored."""
    row = await pool.fetchrow(
        f"SELECT ran_by, night, model, effort, threads FROM {schema}.runs "
        "WHERE tenant_id = $1 AND case_id = $2 AND run_id = $3",
        tenant_id,
        case_id,
        run_id,
    )
    if row is None:
        return None
    threads = [t for t in json.loads(row["threads"]) if t["index"] == index]
    if not threads:
        return None
    return {
        **threads[0],
        "ranBy": row["ran_by"],
        "runner": runner_of(row["night"]),
        "model": row["model"],
        "effort": row["effort"],
    }


async def get_case(
    pool: asyncpg.Pool, tenant_id: str, case_id: UUID, schema: str = SCHEMA
) -> dict[str, Any] | None:
    """One case with every run, newest first (earlier runs stay in the history)."""
    row = await pool.fetchrow(
        f"SELECT * FROM {schema}.cases WHERE tenant_id = $1 AND case_id = $2", tenant_id, case_id
    )
    if row is None:
        return None
    rows = await pool.fetch(
        f"SELECT * FROM {schema}.runs WHERE case_id = $1 ORDER BY position DESC", case_id
    )
    runs = [
        {
            "runId": str(r["run_id"]),
            "ranBy": r["ran_by"],
            "runner": runner_of(r["night"]),
            "night": r["night"],
            "model": r["model"],
            "effort": r["effort"],
            "summary": json.loads(r["summary"]),
            "threads": json.loads(r["threads"]),
            "recordedAt": r["recorded_at"].isoformat(),
        }
        for r in rows
    ]
    return {**case_json(row), "runs": runs, "history": pass_rate_history(runs)}


def pass_rate_history(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """W58: the pass rate of each runner over its own runs (newest first, as given), never
    across runners; the runner whose run is newest comes first."""
    lines: dict[RunnerKey, list[dict[str, Any]]] = {}
    for run in runs:
        lines.setdefault(RunnerKey(run["runner"], run["ranBy"]), []).append(run)
    history = []
    for key, own in lines.items():
        passed = sum(1 for run in own if run["summary"]["passed"])
        history.append(
            {
                "runner": key.runner,
                "ranBy": key.ran_by,
                "runs": len(own),
                "passed": passed,
                "passRate": passed / len(own),
                "points": [
                    {
                        "runId": run["runId"],
                        "recordedAt": run["recordedAt"],
                        "passed": run["summary"]["passed"],
                        "correctRate": run["summary"].get("correct_rate"),
                    }
                    for run in own
                ],
            }
        )
    return history


async def tenants_with_confirmed_cases(pool: asyncpg.Pool, schema: str = SCHEMA) -> list[str]:
    """The tenants a night is planned for (SPEC W78: confirmed cases only)."""
    rows = await pool.fetch(
        f"SELECT DISTINCT tenant_id FROM {schema}.cases WHERE confirmed_by IS NOT NULL "
        "ORDER BY tenant_id"
    )
    return [row["tenant_id"] for row in rows]


async def case_verdicts(
    pool: asyncpg.Pool, tenant_id: str, schema: str = SCHEMA
) -> list[dict[str, Any]]:
    """Every case of the tenant by ref: ``ref, agent, source`` and ``verdicts``, the verdict
    of its last run of each runner, oldest first (W58; none when it never ran)."""
    rows = await pool.fetch(
        f"SELECT ref, agent, source, last_runs FROM {schema}.cases WHERE tenant_id = $1 "
        "ORDER BY ref",
        tenant_id,
    )
    return [
        {
            "ref": row["ref"],
            "agent": row["agent"],
            "source": row["source"],
            "verdicts": {
                RunnerKey(run["runner"], run["ranBy"]): bool(run["summary"]["passed"])
                for run in last_runs(row)[::-1]  # oldest first: the newest is the last
            },
        }
        for row in rows
    ]


async def failed_runs(pool: asyncpg.Pool, schema: str = SCHEMA) -> list[asyncpg.Record]:
    """Every run that failed, of every tenant: ``run_id, tenant_id, agent, ref`` (its case's),
    ``summary`` (JSON text) and ``recorded_at``."""
    return await pool.fetch(
        "SELECT r.run_id, r.tenant_id, c.agent, c.ref, r.summary, r.recorded_at "
        f"FROM {schema}.runs r JOIN {schema}.cases c USING (case_id) "
        "WHERE (r.summary ->> 'passed')::boolean IS FALSE"
    )


async def case_agents(
    pool: asyncpg.Pool, tenant_id: str, case_ids: Sequence[str | UUID], schema: str = SCHEMA
) -> dict[str, tuple[str, str]]:
    """The agent and ref of each of the tenant's cases among ``case_ids`` (a night's lines
    name cases by id; another tenant's case is not among the answers)."""
    rows = await pool.fetch(
        f"SELECT case_id, agent, ref FROM {schema}.cases WHERE tenant_id = $1 "
        "AND case_id = ANY($2::uuid[])",
        tenant_id,
        [str(case) for case in case_ids],
    )
    return {str(row["case_id"]): (row["agent"], row["ref"]) for row in rows}


async def case_refs(
    pool: asyncpg.Pool, tenant_id: str, case_ids: Sequence[str | UUID], schema: str = SCHEMA
) -> dict[str, str]:
    """The refs of the tenant's cases among ``case_ids`` (``case_agents`` without the agent)."""
    named = await case_agents(pool, tenant_id, case_ids, schema)
    return {case: ref for case, (_, ref) in named.items()}


# The runs of the cases the cases' list would show (its filters, $1 to $3).
RUNS_OF_LISTED_CASES = (
    f"FROM {SCHEMA}.runs r JOIN {SCHEMA}.cases c USING (case_id) WHERE r.tenant_id = $1 "
    "AND ($2::text IS NULL OR c.agent = $2) "
    "AND ($3::boolean IS NULL OR (c.confirmed_by IS NOT NULL) = $3)"
)


async def page_runs(
    pool: asyncpg.Pool | Connection,
    tenant_id: str,
    *,
    agent: str | None = None,
    confirmed: bool | None = None,
    before: int | None = None,
    limit: int = 1_000,
) -> tuple[list[dict[str, Any]], int | None]:
    """The tenant's runs of the cases ``page_cases`` lists under the same filters, newest
    first, keyset-paginated on position (an export's pages); each with its case's ref and
    agent beside it. The position to pass as ``before`` next (None on the last page)."""
    rows = await pool.fetch(
        "SELECT r.*, c.ref, c.agent " + RUNS_OF_LISTED_CASES
        + " AND ($4::bigint IS NULL OR r.position < $4) ORDER BY r.position DESC LIMIT $5",
        tenant_id, agent, confirmed, before, limit + 1,
    )  # fmt: skip
    items = [
        {
            "runId": str(r["run_id"]),
            "caseId": str(r["case_id"]),
            "caseRef": r["ref"],
            "agent": r["agent"],
            "ranBy": r["ran_by"],
            "runner": runner_of(r["night"]),
            "night": r["night"],
            "model": r["model"],
            "effort": r["effort"],
            "summary": json.loads(r["summary"]),
            "threads": json.loads(r["threads"]),
            "recordedAt": r["recorded_at"].isoformat(),
        }
        for r in rows[:limit]
    ]
    return items, (rows[limit - 1]["position"] if len(rows) > limit else None)


async def count_runs(
    pool: asyncpg.Pool | Connection,
    tenant_id: str,
    *,
    agent: str | None = None,
    confirmed: bool | None = None,
) -> int:
    """How many runs ``page_runs`` pages through under these filters (an export's total)."""
    found = await pool.fetchval(
        "SELECT count(*) " + RUNS_OF_LISTED_CASES, tenant_id, agent, confirmed
    )
    return int(found)
