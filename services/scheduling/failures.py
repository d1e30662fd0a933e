"""Scheduled work in bulkheads: each tenant's share of a job stands or falls on its own.

The proposal generator raises each cluster's proposal, the digest builder builds each tenant's
digest and the nightly runner plans and drives each tenant's night as a *unit* of its own
(``isolated``): a unit that fails — whatever the reason, foreseen by the doors or not — does
not stop the others of the same run. Its failure is

- logged with the tenant and the unit (the log is the operator's),
- counted in ``feedbackloop_scheduled_failures_total{job}`` (never a tenant label: the
  metrics port is unauthenticated),
- recorded in ``scheduled_failures`` with its reason and the attempts so far, which the
  scheduler's status shows per job (how many units fail and why, not whose: ``/readyz`` is
  unauthenticated too) and the gauge ``feedbackloop_scheduled_failing{job}`` counts,
- and retried: the scheduler gives every order with a failing unit again at its next tick.

A unit that then goes through is struck off (``settle``). A failure of the surroundings
(PostgreSQL away) is no unit's: it raises, and the scheduler's supervisor restarts it.
"""

import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

import asyncpg

from services.followers.reader import Connection
from services.followers.transient import is_transient
from services.observing.metrics import SCHEDULED_FAILURES

log = logging.getLogger(__name__)
T = TypeVar("T")

PROPOSALS, DIGEST, NIGHT, NIGHT_CASE = "proposals", "digest", "night", "night-case"
SCHEDULER = "scheduler"  # the scheduler's name where it stands beside the readers (status)
MAX_REASON_TEXT = 500

DDL = """
CREATE TABLE IF NOT EXISTS scheduled_failures (
    job text NOT NULL,
    tenant_id text NOT NULL,
    unit text NOT NULL,
    order_name text NOT NULL,
    reason text NOT NULL,
    attempts int NOT NULL DEFAULT 1,
    first_failed_at timestamptz NOT NULL DEFAULT now(),
    last_failed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job, tenant_id, unit)
);
"""


@dataclass(frozen=True)
class Unit:
    """One tenant's share of a job: ``unit`` names it within the tenant (a target asset, a
    week, a night's date); ``order`` is the scheduler's order that tries it again."""

    job: str
    tenant_id: str
    unit: str
    order: str


@dataclass(frozen=True)
class Failure:
    unit: Unit
    reason: str


@dataclass(frozen=True)
class Failing:
    """How one job stands: its units failing now, and the latest failure's kind of error."""

    job: str
    units: int
    latest_error: str


async def ensure_table(conn: Connection) -> None:
    await conn.execute(DDL)


def reason_of(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:MAX_REASON_TEXT]


async def isolated(unit: Unit, work: Callable[[], Awaitable[T]]) -> T | Failure:
    """Run one unit; answers what it answered, or its failure (logged and counted). A failure
    of the surroundings raises: it is no tenant's."""
    try:
        return await work()
    except Exception as error:
        if is_transient(error):
            raise
        return failed(unit, error)


def failed(unit: Unit, error: BaseException) -> Failure:
    """A unit's failure, logged with its traceback and counted; ``settle`` records it."""
    log.error(
        "%s: %s of %s failed; the others go on, and it is tried again at the next tick",
        unit.order, unit.unit, unit.tenant_id, exc_info=error,
    )  # fmt: skip
    SCHEDULED_FAILURES.labels(unit.job).inc()
    return Failure(unit, reason_of(error))


async def settle(
    pool: asyncpg.Pool, job: str, failures: Iterable[Failure], *, order: str | None = None
) -> None:
    """After a run of ``job`` (of one ``order``, or None when each run covers every unit):
    its failures recorded (attempts counted on), every other unit it covered struck off."""
    now_failing = list(failures)
    tenants, units = [f.unit.tenant_id for f in now_failing], [f.unit.unit for f in now_failing]
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(
            "DELETE FROM scheduled_failures s WHERE job = $1 "
            "AND ($2::text IS NULL OR order_name = $2) AND NOT EXISTS ("
            "SELECT 1 FROM unnest($3::text[], $4::text[]) AS f(tenant_id, unit) "
            "WHERE f.tenant_id = s.tenant_id AND f.unit = s.unit)",
            job, order, tenants, units,
        )  # fmt: skip
        await _record(conn, job, now_failing)


async def record(pool: asyncpg.Pool, job: str, failures: Iterable[Failure]) -> None:
    """Failures of a run that does not cover its units' orders (a night resumed): recorded,
    nothing struck off."""
    async with pool.acquire() as conn, conn.transaction():
        await _record(conn, job, list(failures))


async def _record(conn: Connection, job: str, failures: list[Failure]) -> None:
    for f in failures:
        await conn.execute(
            "INSERT INTO scheduled_failures (job, tenant_id, unit, order_name, reason) "
            "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (job, tenant_id, unit) DO UPDATE "
            "SET order_name = $4, reason = $5, last_failed_at = now(), "
            "attempts = scheduled_failures.attempts + 1",
            job, f.unit.tenant_id, f.unit.unit, f.unit.order, f.reason,
        )  # fmt: skip


async def forget_order(pool: asyncpg.Pool, order: str) -> None:
    """Strike off the failing units of an order no longer retried."""
    await pool.execute("DELETE FROM scheduled_failures WHERE order_name = $1", order)


async def failing_orders(pool: asyncpg.Pool | Connection) -> list[str]:
    """The orders that have a failing unit: the scheduler gives them again."""
    rows = await pool.fetch("SELECT DISTINCT order_name FROM scheduled_failures ORDER BY 1")
    return [row["order_name"] for row in rows]


async def failing_by_job(pool: asyncpg.Pool | Connection) -> list[Failing]:
    """Per job, the units failing now and the kind of error of the latest failure: what the
    scheduler's status shows (no tenant, no unit name, no message: it is read unauthenticated)."""
    rows = await pool.fetch(
        "SELECT job, count(*) AS units, "
        "(array_agg(split_part(reason, ':', 1) ORDER BY last_failed_at DESC))[1] AS latest "
        "FROM scheduled_failures GROUP BY job ORDER BY job"
    )
    return [Failing(row["job"], row["units"], row["latest"]) for row in rows]


def failing_incidents(failing: list[Failing]) -> list[str]:
    """The units failing, per job, as an incident of the scheduler: an operator's to-do that
    leaves the instance ready (services/processes/health.py), never a tenant or a unit."""
    if not failing:
        return []
    jobs = ", ".join(f"{f.job} {f.units} ({f.latest_error})" for f in failing)
    return [f"units failing, tried again at every tick: {jobs}"]


async def recorded_failures(pool: asyncpg.Pool | Connection) -> list[dict[str, object]]:
    """Every failing unit with its tenant, reason and attempts, for an operator."""
    rows = await pool.fetch(
        "SELECT job, tenant_id, unit, order_name, reason, attempts, first_failed_at, "
        "last_failed_at FROM scheduled_failures ORDER BY job, tenant_id, unit"
    )
    return [dict(row) for row in rows]
