"""The audit trail: one row for every command the bus decided, applied or refused (SPEC C52;
decisions D30), in a table of its own beside the log.

Why a table and not the log: a refused command appends nothing, by rule (an event count
unchanged is how every refusal is tested), and an applied command's events do not all name
their actor or the actor's roles. So the bus, once it has answered a batch, hands each
command's outcome here: who (actor, roles, service or person), when, which command (its name
only: a body may hold what a person asked to have erased), on which aggregates, and how it
ended. Rows are written by a task of their own, a batch at a time, so the command path never
waits on the audit; the rows of a process that dies before its next write (a quarter of a
second at most) are lost, the log's events are not (decisions D30).

A refusal decided at a door before any command exists (a missing scope or role, a route's or
the gRPC method's own check) is a row of the same table, by ``refused`` (decisions D110):
every decision, at every door, is one row, and each row names its door. A batch request is
one caller's decision: its items that ended alike are one row naming how many they are
(``items``) and each item's aggregate (decisions D281). Each row is written out as the COPY
reads it when it is recorded, who and what decided encoded once (``services.bus.audit_rows``,
decisions D310).
"""

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from contracts.errors import DomainError
from services.bus.asking import Asking
from services.bus.audit_rows import COLUMNS, Heads, copy_data, row
from services.bus.decisions import Outcome
from services.bus.units import Decided, Unit

log = logging.getLogger(__name__)

TABLE = "audit_trail"
# One key serves every read (a tenant's rows, newest first, by ``id``): the primary key is
# (tenant_id, id), and no index on ``id`` alone is kept beside it (decisions D280). A table
# made before, with its key on ``id`` and an index by tenant, gets the one key once.
DDL = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    id bigserial,
    tenant_id text NOT NULL,
    actor text NOT NULL,
    roles text[] NOT NULL,
    service boolean NOT NULL,
    at timestamptz NOT NULL,
    command text NOT NULL,
    command_id text NOT NULL,
    aggregates uuid[] NOT NULL,
    result text NOT NULL,
    reason text,
    door text,
    items integer NOT NULL DEFAULT 1,
    CONSTRAINT audit_trail_key PRIMARY KEY (tenant_id, id)
);
ALTER TABLE {TABLE} ADD COLUMN IF NOT EXISTS door text;
ALTER TABLE {TABLE} ADD COLUMN IF NOT EXISTS items integer NOT NULL DEFAULT 1;
DO $$ BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM pg_constraint
        WHERE conrelid = '{TABLE}'::regclass AND conname = 'audit_trail_key'
    ) THEN
        ALTER TABLE {TABLE} DROP CONSTRAINT IF EXISTS audit_trail_pkey,
            ADD CONSTRAINT audit_trail_key PRIMARY KEY (tenant_id, id);
        DROP INDEX IF EXISTS audit_by_tenant;
    END IF;
END $$;
"""
FLUSH_SECONDS = 0.25
# Rows kept while PostgreSQL cannot take them; past this, the oldest are dropped (and said).
BOUND = 100_000


async def ensure_table(conn: asyncpg.Connection | PoolConnectionProxy) -> None:
    await conn.execute(DDL)


def ended(result: Any) -> tuple[str, str | None]:
    """How a command ended, as the audit says it: its result and, if refused or failed, why."""
    if isinstance(result, Outcome):
        return ("already-applied" if result.already_applied else "applied"), None
    if isinstance(result, DomainError):
        return "refused", result.code
    return "failed", type(result).__name__


def named_ids(command: Any) -> list[UUID]:
    """The ids a command names (the aggregate it is about, whether or not it was decided)."""
    return [value for value in vars(command).values() if isinstance(value, UUID)]


def one_decision(unit: Unit) -> bool:
    """A unit of several commands submitted together by one caller with no position to keep
    (an HTTP batch): each command was issued by one caller at one time through one door, so
    its items that ended alike are one decision (decisions D281). A Kafka poll's unit keeps
    a position and holds many senders' messages, each a decision of its own."""
    return unit.batch and unit.tracking is None and len(unit.commands) > 1


@dataclass
class AuditTrail:
    """Collects each answered batch's rows on the event loop, each row written out as the
    COPY reads it (``services.bus.audit_rows``, decisions D310), and writes them in the
    background."""

    pool: asyncpg.Pool
    _rows: list[bytes] = field(default_factory=list)
    _writer: asyncio.Task[None] | None = None
    _writing: asyncio.Lock = field(default_factory=asyncio.Lock)
    _heads: Heads = field(default_factory=Heads)

    def record(self, batch: Iterable[Unit], decided: Iterable[Decided] = ()) -> None:
        """The rows of a batch whose callers have their answers (``decided``: what was
        decided of it, for the aggregates each decision touched). One caller's batch through
        one door (``one_decision``) is a row per outcome, naming how many items it stands for
        (decisions D281); every other command is a row of its own."""
        # Written for the single command's path first: it runs for every decision, on the
        # event loop (decisions D310).
        touched: dict[tuple[int, int], list[UUID]] = {}
        for unit, index, decision in decided:
            if unit is not None:
                aggregates, created = decision.aggregates, decision.created
                if not aggregates and len(created) == 1:
                    ids = [created[0].originator_id]
                else:
                    ids = [a.id for a in aggregates] + [e.originator_id for e in created]
                touched[(id(unit), index)] = ids
        rows, kept, make = self._rows, self._heads.kept, self._heads.make
        for unit in batch:
            if unit.batch and one_decision(unit):
                self._merged(unit, touched)
                continue
            key, results = id(unit), unit.results
            for index, issued in enumerate(unit.commands):
                result = results[index]
                if type(result) is Outcome and not result.already_applied:
                    outcome, reason = "applied", None
                else:
                    outcome, reason = ended(result)
                # What a decision touched names its aggregates; a refused command touched
                # none, and is filed under the ids it names (the aggregate it was about).
                ids = touched.get((key, index)) or named_ids(issued.command)
                head = (issued.tenant_id, issued.actor, issued.roles, issued.service,
                        type(issued.command).__name__, outcome, reason, issued.door, 1)  # fmt: skip
                rows.append(row(kept.get(head) or make(head), issued.at, issued.command_id, ids))
        self._written_soon()

    def _merged(self, unit: Unit, touched: dict[tuple[int, int], list[UUID]]) -> None:
        """One caller's batch: a row per outcome, naming its items and their aggregates."""
        merged: dict[tuple[Any, ...], list[Any]] = {}
        for index, (issued, result) in enumerate(zip(unit.commands, unit.results, strict=True)):
            outcome, reason = ended(result)
            ids = touched.get((id(unit), index)) or named_ids(issued.command)
            name = type(issued.command).__name__
            same = (issued.tenant_id, issued.actor, issued.roles, issued.service, name,
                    outcome, reason, issued.door, issued.at)  # fmt: skip
            if (items := merged.get(same)) is None:
                merged[same] = [issued.command_id, list(ids), 1]
            else:
                items[1] += ids
                items[2] += 1
        for same, (command_id, ids, count) in merged.items():
            self._rows.append(row(self._heads.make((*same[:-1], count)), same[-1], command_id, ids))

    def refused(self, asked: Asking, at: datetime) -> None:
        """The row of a refusal decided at a door before any command reached the bus
        (decisions D110): the caller, the door, the operation asked (never a body) and the
        error code; an empty command id (none was issued) and no aggregates (a path's
        values are not read into the audit)."""
        caller = asked.caller
        if caller is None or not asked.refused_here():
            return
        asked.audited = True
        reason = asked.refusal or "not-permitted"
        head = self._heads.make(
            (caller.tenant_id, caller.actor, caller.roles, caller.service, asked.asked,
             "refused", reason, asked.door, 1)
        )  # fmt: skip
        self._rows.append(row(head, at, "", []))
        self._written_soon()

    def granted(
        self, asked: Asking, at: datetime, what: str | None = None, decision_id: str = ""
    ) -> None:
        """The row of what a door decided itself, with no command behind it: a read the audit
        keeps (an export, decisions D212) or a widget token minted (D235, ``what`` and the
        token's id): the caller, the door, the operation asked and ``applied``; no aggregates,
        as a refusal's row."""
        caller = asked.caller
        if caller is None:
            return
        asked.audited = True
        head = self._heads.make(
            (caller.tenant_id, caller.actor, caller.roles, caller.service, what or asked.asked,
             "applied", None, asked.door, 1)
        )  # fmt: skip
        self._rows.append(row(head, at, decision_id, []))
        self._written_soon()

    def _written_soon(self) -> None:
        if len(self._rows) > BOUND:
            log.warning("audit: %d rows not written yet; dropping the oldest", len(self._rows))
            del self._rows[: len(self._rows) - BOUND]
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_soon(), name="audit-trail")

    async def _write_soon(self) -> None:
        await asyncio.sleep(FLUSH_SECONDS)  # a quarter second's batches go in one COPY
        await self.flush()

    async def flush(self) -> None:
        """Write every row collected so far (a reader of the audit calls it first, so that
        its own process's decisions are there)."""
        # One write at a time: a reader's flush waits for the rows another write has taken.
        async with self._writing:
            while self._rows:
                rows, self._rows = self._rows, []
                try:
                    await self.pool.copy_to_table(
                        TABLE, source=copy_data(rows), columns=COLUMNS, format="binary"
                    )
                except asyncio.CancelledError:
                    self._rows[:0] = rows  # the closing flush writes them
                    raise
                except Exception as error:
                    self._rows[:0] = rows  # kept for the next write
                    log.warning("audit: writing %d rows failed (%r); kept", len(rows), error)
                    return

    async def aclose(self) -> None:
        if self._writer is not None:
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._writer
        with contextlib.suppress(Exception):
            await self.flush()


@dataclass(frozen=True)
class AuditFilter:
    actor: str | None = None
    aggregate: UUID | None = None
    since: datetime | None = None  # at or after
    until: datetime | None = None  # before


def record_view(row: asyncpg.Record) -> dict[str, Any]:
    return {
        "actor": row["actor"],
        "roles": list(row["roles"]),
        "service": row["service"],
        "at": row["at"].isoformat(),
        "command": row["command"],
        "commandId": row["command_id"],
        "aggregates": [str(a) for a in row["aggregates"]],
        "result": row["result"],
        "reason": row["reason"],
        "door": row["door"],
        "items": row["items"],
    }


async def forget_actor(pool: asyncpg.Pool, tenant_id: str, actor: str, instead: str) -> int:
    """An erased person's rows name them no more: their actor becomes ``instead``, the same
    stand-in the read models show (decisions D43). Answers how many rows changed."""
    done = await pool.execute(
        f"UPDATE {TABLE} SET actor = $3 WHERE tenant_id = $1 AND actor = $2",
        tenant_id, actor, instead,
    )  # fmt: skip
    return int(done.split()[-1])


async def audit_page(
    pool: asyncpg.Pool,
    tenant_id: str,
    where: AuditFilter,
    *,
    before: int | None = None,
    limit: int = 50,
) -> tuple[list[dict[str, Any]], int | None]:
    """The tenant's decisions, newest first, those recorded before row ``before``, that match
    ``where``; and the row to pass as ``before`` for the next page (None on the last)."""
    rows = await pool.fetch(
        f"SELECT * FROM {TABLE} WHERE tenant_id = $1 AND ($2::bigint IS NULL OR id < $2) "
        "AND ($3::text IS NULL OR actor = $3) AND ($4::uuid IS NULL OR $4 = ANY(aggregates)) "
        "AND ($5::timestamptz IS NULL OR at >= $5) AND ($6::timestamptz IS NULL OR at < $6) "
        "ORDER BY id DESC LIMIT $7",
        tenant_id, before, where.actor, where.aggregate, where.since, where.until, limit + 1,
    )  # fmt: skip
    last = rows[limit - 1]["id"] if len(rows) > limit else None
    return [record_view(row) for row in rows[:limit]], last


async def audit_count(pool: asyncpg.Pool, tenant_id: str, where: AuditFilter) -> int:
    """How many of the tenant's decisions match ``where`` (an export's progress)."""
    count = await pool.fetchval(
        f"SELECT count(*) FROM {TABLE} WHERE tenant_id = $1 "
        "AND ($2::text IS NULL OR actor = $2) AND ($3::uuid IS NULL OR $3 = ANY(aggregates)) "
        "AND ($4::timestamptz IS NULL OR at >= $4) AND ($5::timestamptz IS NULL OR at < $5)",
        tenant_id, where.actor, where.aggregate, where.since, where.until,
    )  # fmt: skip
    return int(count)
