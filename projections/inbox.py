"""The reviewer Inbox: every submitted report that is not handed over (SPEC W30–W33), plus
hand-overs whose webhook failed for good, so nobody's report is dropped.

Beside each report, its lifecycle: one ``report_steps`` row per thing that happened to it
(drafted, submitted or handed over, each delivery attempt, triaged, resolved, won't fix) with
who and when, so a reader sees every step, not only the latest review.

Rows keep the labelled block's facts (kind, agent, model, addressee: W36, W37) next to the
report's own words; a report without a block is listed under the unknown agent (W38). The facts
are the ones stored on ``Report.Drafted``, never the text parsed again, so a parser change
never changes what a rebuild produces.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

from contracts.report_facts import block_of
from projections import events as ev
from projections import report_annotations as annotations
from projections.read_model import attributes_json
from services.followers.reader import Connection, Positioned

SCHEMA = "rm_inbox"

UNKNOWN_AGENT = "(unknown agent)"

COLUMNS = (
    "report_id, tenant_id, reporter, category, message, thread, message_ref, extra_context, "
    "kind, agent, model, addressee, status, in_inbox, handed_over, delivery_attempts, "
    "delivery_failed, delivery_error, drafted_at, submitted_at, reviewed_by, reviewed_at, "
    "change, link, reason, trace_id, span_id, gen_ai, position"
)


class Inbox:
    name = "inbox"
    handles = (
        ev.REPORT_DRAFTED,
        ev.REPORT_SUBMITTED,
        ev.REPORT_HANDED_OVER,
        ev.REPORT_TRIAGED,
        ev.REPORT_RESOLVED,
        ev.REPORT_WONT_FIX,
        ev.REPORT_DELIVERY_ATTEMPTED,
        ev.REPORT_DELIVERY_FAILED,
        *annotations.HANDLES,
    )

    def ddl(self, schema: str) -> str:
        return f"""
        CREATE TABLE IF NOT EXISTS {schema}.reports (
            report_id uuid PRIMARY KEY,
            tenant_id text NOT NULL,
            reporter text NOT NULL,
            category text NOT NULL,
            message text NOT NULL,
            thread text,
            message_ref text,
            extra_context text,
            kind text,
            agent text NOT NULL,
            model text,
            addressee text,
            status text NOT NULL,
            in_inbox boolean NOT NULL DEFAULT false,
            handed_over boolean NOT NULL DEFAULT false,
            delivery_attempts integer NOT NULL DEFAULT 0,
            delivery_failed boolean NOT NULL DEFAULT false,
            delivery_error text,
            drafted_at timestamptz NOT NULL,
            submitted_at timestamptz,
            reviewed_by text,
            reviewed_at timestamptz,
            change text,
            link text,
            reason text,
            trace_id text,
            span_id text,
            gen_ai jsonb,
            position bigint NOT NULL
        );
        CREATE TABLE IF NOT EXISTS {schema}.report_steps (
            report_id uuid NOT NULL,
            position bigint NOT NULL,
            at timestamptz NOT NULL,
            actor text,
            step text NOT NULL,
            detail text,
            PRIMARY KEY (report_id, position)
        );
        {annotations.ddl(schema)}
        """

    def indexes(self, schema: str) -> str:
        return f"""
        CREATE INDEX IF NOT EXISTS inbox_by_tenant
            ON {schema}.reports (tenant_id, in_inbox, position DESC);
        CREATE INDEX IF NOT EXISTS reports_by_reporter
            ON {schema}.reports (tenant_id, reporter, position DESC);
        """

    async def apply(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        table = f"{schema}.reports"
        for p in batch:
            e, at = p.event, p.event.timestamp
            await self.step(conn, schema, p)
            match ev.topic_of(e):
                case ev.REPORT_DRAFTED:
                    block = block_of(e.facts)
                    model = block.model.actual if block and block.model else None
                    await conn.execute(
                        f"INSERT INTO {table} (report_id, tenant_id, reporter, category, "
                        "message, thread, message_ref, extra_context, kind, agent, model, "
                        "addressee, status, drafted_at, position, trace_id, span_id, gen_ai) "
                        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'Draft', "
                        "$13, $14, $15, $16, $17) ON CONFLICT (report_id) DO NOTHING",
                        e.originator_id, e.tenant_id, e.reporter, e.category, e.message,
                        e.thread, e.message_ref, e.extra_context,
                        block.kind if block else None,
                        (block.agent if block else None) or UNKNOWN_AGENT,
                        model,
                        block.addressee if block else None,
                        at, p.position,
                        # Reports drafted before trace links have none (D261).
                        getattr(e, "trace_id", None), getattr(e, "span_id", None),
                        attributes_json(e),
                    )  # fmt: skip
                case ev.REPORT_SUBMITTED:
                    await self.set(conn, table, p, status="New", in_inbox=True, submitted_at=at)
                case ev.REPORT_HANDED_OVER:
                    await self.set(
                        conn, table, p, status="HandedOver", handed_over=True, submitted_at=at
                    )
                case ev.REPORT_TRIAGED:
                    await self.set(
                        conn, table, p, status="Triaged", reviewed_by=e.reviewed_by, reviewed_at=at
                    )
                case ev.REPORT_RESOLVED:
                    await self.set(
                        conn, table, p, status="Resolved", reviewed_by=e.reviewed_by,
                        reviewed_at=at, change=e.change, link=e.link,
                    )  # fmt: skip
                case ev.REPORT_WONT_FIX:
                    await self.set(
                        conn, table, p, status="WontFix", reviewed_by=e.reviewed_by,
                        reviewed_at=at, reason=e.reason,
                    )  # fmt: skip
                case ev.REPORT_DELIVERY_ATTEMPTED:
                    await self.set(
                        conn, table, p, delivery_attempts=e.attempt, delivery_error=e.error
                    )
                case ev.REPORT_DELIVERY_FAILED:
                    await self.set(
                        conn, table, p, status="New", in_inbox=True, delivery_failed=True
                    )
                case topic if topic in annotations.HANDLES:
                    await annotations.apply(conn, schema, p)
                case _:
                    raise TypeError(f"the inbox does not handle {type(e).__name__}")

    @staticmethod
    async def step(conn: Connection, schema: str, p: Positioned) -> None:
        """The event as a step of the report's lifecycle: who (the reporter, the reviewer, or
        nobody for the service's own delivery) did what, and the words that go with it."""
        e = p.event
        actor, step, detail = STEPS[ev.topic_of(e)](e)
        if actor is AUTHOR:
            actor = await conn.fetchval(
                f"SELECT reporter FROM {schema}.reports WHERE report_id = $1", e.originator_id
            )
        await conn.execute(
            f"INSERT INTO {schema}.report_steps (report_id, position, at, actor, step, detail) "
            "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
            e.originator_id, p.position, e.timestamp, actor, step, detail,
        )  # fmt: skip

    @staticmethod
    async def set(conn: Connection, table: str, p: Positioned, **values: Any) -> None:
        columns = ", ".join(f"{name} = ${i}" for i, name in enumerate(values, start=3))
        await conn.execute(
            f"UPDATE {table} SET {columns}, position = $2 WHERE report_id = $1",
            p.event.originator_id,
            p.position,
            *values.values(),
        )


# Each handled event as (actor, step, detail) of the lifecycle. The submission is the
# author's, whom only the drafting names: ``AUTHOR`` stands for them until the step is kept.
AUTHOR = "author"
STEPS: dict[str, Any] = {
    ev.REPORT_DRAFTED: lambda e: (e.reporter, "drafted", None),
    ev.REPORT_SUBMITTED: lambda e: (AUTHOR, "submitted", None),
    ev.REPORT_HANDED_OVER: lambda e: (AUTHOR, "handed over to engineering", None),
    ev.REPORT_TRIAGED: lambda e: (e.reviewed_by, "triaged", None),
    ev.REPORT_RESOLVED: lambda e: (e.reviewed_by, "resolved", e.change),
    ev.REPORT_WONT_FIX: lambda e: (e.reviewed_by, "closed as won't fix", e.reason),
    ev.REPORT_DELIVERY_ATTEMPTED: lambda e: (None, f"delivery attempt {e.attempt}", e.error),
    ev.REPORT_DELIVERY_FAILED: lambda e: (None, "delivery failed: back in the Inbox", e.error),
    **annotations.STEPS,
}


@dataclass(frozen=True)
class InboxFilter:
    status: str | None = None
    category: str | None = None
    kind: str | None = None
    agent: str | None = None
    addressee: str | None = None
    submitted_before: datetime | None = None
    submitted_after: datetime | None = None


def in_inbox(schema: str) -> str:
    """The Inbox's filters, $1 to $8 (``inbox_arguments``), over ``{schema}.reports r``: one
    text for the list and its count. The kind filtered on is the one in force (decisions
    D170)."""
    return (
        "r.tenant_id = $1 AND r.in_inbox "
        "AND ($2::text IS NULL OR r.status = $2) AND ($3::text IS NULL OR r.category = $3) "
        f"AND ($4::text IS NULL OR {annotations.kind_in_force(schema, 'r')} = $4) "
        "AND ($5::text IS NULL OR r.agent = $5) "
        "AND ($6::text IS NULL OR r.addressee ILIKE '%' || $6 || '%') "
        "AND ($7::timestamptz IS NULL OR r.submitted_at < $7) "
        "AND ($8::timestamptz IS NULL OR r.submitted_at >= $8)"
    )


def inbox_arguments(tenant_id: str, where: InboxFilter) -> tuple[object, ...]:
    return (
        tenant_id, where.status, where.category, where.kind, where.agent, where.addressee,
        where.submitted_before, where.submitted_after,
    )  # fmt: skip


async def count_inbox(
    pool: asyncpg.Pool | Connection, tenant_id: str, where: InboxFilter, schema: str = SCHEMA
) -> int:
    """How many reports ``list_inbox`` pages through under ``where`` (an export's total)."""
    found = await pool.fetchval(
        f"SELECT count(*) FROM {schema}.reports r WHERE {in_inbox(schema)}",
        *inbox_arguments(tenant_id, where),
    )
    return int(found)


async def lifecycles(
    pool: asyncpg.Pool | Connection, report_ids: Sequence[UUID], schema: str = SCHEMA
) -> dict[UUID, list[dict[str, Any]]]:
    """The lifecycle of each of ``report_ids`` (as ``report_lifecycle`` says one), in one
    query: an export adds them to a page of reports ``list_inbox`` answered, whose tenant
    rule is its."""
    rows = await pool.fetch(
        f"SELECT report_id, at, actor, step, detail FROM {schema}.report_steps "
        "WHERE report_id = ANY($1::uuid[]) ORDER BY report_id, position",
        list(report_ids),
    )
    found: dict[UUID, list[dict[str, Any]]] = {report_id: [] for report_id in report_ids}
    for row in rows:
        found[row["report_id"]].append(step_json(row))
    return found


async def list_inbox(
    pool: asyncpg.Pool | Connection,
    tenant_id: str,
    where: InboxFilter,
    *,
    before: int | None = None,
    limit: int = 50,
    schema: str = SCHEMA,
) -> tuple[list[dict[str, Any]], int | None]:
    """The tenant's Inbox, newest change first, keyset-paginated on position."""
    rows = await pool.fetch(
        f"SELECT {COLUMNS} FROM {schema}.reports r WHERE {in_inbox(schema)} "
        "AND ($9::bigint IS NULL OR r.position < $9) ORDER BY r.position DESC LIMIT $10",
        *inbox_arguments(tenant_id, where), before, limit + 1,
    )  # fmt: skip
    items = [report_json(row) for row in rows[:limit]]
    return items, (rows[limit - 1]["position"] if len(rows) > limit else None)


async def list_mine(
    pool: asyncpg.Pool,
    tenant_id: str,
    reporter: str,
    *,
    status: str | None = None,
    before: int | None = None,
    limit: int = 50,
    schema: str = SCHEMA,
) -> tuple[list[dict[str, Any]], int | None]:
    """The reports ``reporter`` wrote in the tenant, drafts included, with their outcome
    (status, change, link, reason), newest change first, keyset-paginated on position as the
    Inbox is (decisions D51). Nobody else's report is ever among them."""
    rows = await pool.fetch(
        f"SELECT {COLUMNS} FROM {schema}.reports WHERE tenant_id = $1 AND reporter = $2 "
        "AND ($3::text IS NULL OR status = $3) AND ($4::bigint IS NULL OR position < $4) "
        "ORDER BY position DESC LIMIT $5",
        tenant_id, reporter, status, before, limit + 1,
    )  # fmt: skip
    items = [report_json(row) for row in rows[:limit]]
    return items, (rows[limit - 1]["position"] if len(rows) > limit else None)


async def get_report(
    pool: asyncpg.Pool, tenant_id: str, report_id: UUID, *, reader: str, schema: str = SCHEMA
) -> dict[str, Any] | None:
    """One report of the tenant as ``reader`` may see it: a draft only by its author, until
    it is submitted; anyone else's draft is as absent as a missing report."""
    row = await pool.fetchrow(
        f"SELECT {COLUMNS} FROM {schema}.reports WHERE tenant_id = $1 AND report_id = $2 "
        "AND (status <> 'Draft' OR reporter = $3)",
        tenant_id,
        report_id,
        reader,
    )
    return report_json(row) if row else None


async def report_lifecycle(
    pool: asyncpg.Pool, report_id: UUID, schema: str = SCHEMA
) -> list[dict[str, Any]]:
    """Every step of one report, oldest first (ask only for a report ``get_report`` answered:
    the tenant and draft rules are its). A step of the service's own names nobody."""
    rows = await pool.fetch(
        f"SELECT at, actor, step, detail FROM {schema}.report_steps WHERE report_id = $1 "
        "ORDER BY position",
        report_id,
    )
    return [step_json(row) for row in rows]


def step_json(row: asyncpg.Record) -> dict[str, Any]:
    return {
        "at": row["at"].isoformat(),
        "actor": row["actor"],
        "step": row["step"],
        "detail": row["detail"],
    }


def report_json(row: asyncpg.Record) -> dict[str, Any]:
    def iso(value: datetime | None) -> str | None:
        return value.isoformat() if value else None

    return {
        "reportId": str(row["report_id"]),
        "tenantId": row["tenant_id"],
        "reporter": row["reporter"],
        "category": row["category"],
        "status": row["status"],
        "message": row["message"],
        "sidePanel": {"thread": row["thread"], "message": row["message_ref"]},
        "extraContext": row["extra_context"],
        "parsed": {
            "kind": row["kind"],
            "agent": row["agent"],
            "model": row["model"],
            "addressee": row["addressee"],
        },
        "handOver": {
            "handedOver": row["handed_over"],
            "attempts": row["delivery_attempts"],
            "failed": row["delivery_failed"],
            "lastError": row["delivery_error"],
        },
        "draftedAt": iso(row["drafted_at"]),
        "submittedAt": iso(row["submitted_at"]),
        "review": {
            "reviewedBy": row["reviewed_by"],
            "reviewedAt": iso(row["reviewed_at"]),
            "change": row["change"],
            "link": row["link"],
            "reason": row["reason"],
        },
        "traceId": row["trace_id"],
        "spanId": row["span_id"],
        "genAi": json.loads(row["gen_ai"]) if row["gen_ai"] is not None else None,
        "position": row["position"],
    }


async def tenants_with_reports(pool: asyncpg.Pool, schema: str = SCHEMA) -> list[str]:
    """Every tenant that has ever submitted a report."""
    rows = await pool.fetch(
        f"SELECT DISTINCT tenant_id FROM {schema}.reports WHERE submitted_at IS NOT NULL "
        "ORDER BY tenant_id"
    )
    return [row["tenant_id"] for row in rows]


async def submitted_between(
    pool: asyncpg.Pool,
    tenant_id: str,
    start: datetime,
    end: datetime,
    *,
    bound: int,
    schema: str = SCHEMA,
) -> list[asyncpg.Record]:
    """The tenant's reports submitted in ``[start, end)``, newest first, at most ``bound``:
    ``report_id, submitted_at, kind, agent, model``. A draft has no ``submitted_at`` and is
    never among them (W116). ``kind`` is the Kind in force at ``end``: a reviewer's last
    correction made before the week ended, else the reporter's (decisions D170)."""
    kind = annotations.kind_in_force(schema, "r", until="$3")
    return await pool.fetch(
        f"SELECT report_id, submitted_at, {kind} AS kind, agent, model FROM {schema}.reports r "
        "WHERE tenant_id = $1 AND submitted_at >= $2 AND submitted_at < $3 "
        "ORDER BY submitted_at DESC, report_id LIMIT $4",
        tenant_id,
        start,
        end,
        bound,
    )


async def submitted_on_known_agents(
    pool: asyncpg.Pool, schema: str = SCHEMA
) -> list[asyncpg.Record]:
    """Every submitted report, of every tenant, that names its agent and was not closed as
    WontFix: ``report_id, tenant_id, agent, kind, status, submitted_at``."""
    return await pool.fetch(
        f"SELECT report_id, tenant_id, agent, kind, status, submitted_at FROM {schema}.reports "
        "WHERE submitted_at IS NOT NULL AND status <> 'WontFix' AND agent <> $1",
        UNKNOWN_AGENT,
    )


async def waiting_new(
    pool: asyncpg.Pool, tenant_id: str, schema: str = SCHEMA
) -> tuple[int, datetime | None]:
    """How many of the tenant's reports wait New in the Inbox, and the oldest one's
    ``submitted_at``."""
    row = await pool.fetchrow(
        f"SELECT count(*) AS waiting, min(submitted_at) AS oldest FROM {schema}.reports "
        "WHERE tenant_id = $1 AND in_inbox AND status = 'New'",
        tenant_id,
    )
    return (0, None) if row is None else (row["waiting"], row["oldest"])


async def open_for_agents(
    pool: asyncpg.Pool,
    tenant_id: str,
    agents: Sequence[str],
    kinds: Sequence[str],
    *,
    each: int,
    schema: str = SCHEMA,
) -> list[asyncpg.Record]:
    """The tenant's open reports (New or Triaged, in the Inbox) of each of ``agents`` whose
    Kind in force is one of ``kinds``, newest first, at most ``each`` an agent:
    ``report_id, agent, kind, status, model, message, submitted_at`` and ``open``, how many
    the agent has in all."""
    kind = annotations.kind_in_force(schema, "r")
    return await pool.fetch(
        "SELECT * FROM (SELECT report_id, agent, kind, status, model, message, submitted_at, "
        "row_number() OVER (PARTITION BY agent ORDER BY submitted_at DESC, report_id) AS n, "
        "count(*) OVER (PARTITION BY agent) AS open FROM ("
        f"SELECT report_id, agent, lower({kind}) AS kind, status, model, message, submitted_at "
        f"FROM {schema}.reports r WHERE tenant_id = $1 AND agent = ANY($2::text[]) AND in_inbox "
        "AND status IN ('New', 'Triaged')) addressed WHERE kind = ANY($3::text[])) numbered "
        "WHERE n <= $4 ORDER BY agent, n",
        tenant_id, list(agents), list(kinds), each,
    )  # fmt: skip
