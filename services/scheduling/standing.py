"""How the instance's readers stand, the scheduler with them, and the scheduler's orders: the
one query behind ``feedbackloop status``, ``/readyz``, ``GET /factory/operations/readers``
and the console's Operations page.

The readers and the scheduler's ticks are figures of the instance (no tenant's data); the
units a scheduled job fails on are a tenant's, and ``scheduler_orders`` shows a tenant its
own only (decisions D94).
"""

import json
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from services.followers.heartbeats import heard
from services.followers.parking import INBOUND
from services.followers.reader import Connection
from services.followers.standing import (
    MAX_LAG,
    MAX_SILENCE,
    ReaderHealth,
    inbound_health,
    log_head,
    readers_health,
)
from services.scheduling.failures import SCHEDULER, failing_by_job, failing_incidents


async def scheduler_health(pool: asyncpg.Pool, *, max_silence: float) -> ReaderHealth | None:
    """How the scheduler stands, or None where none has ever run."""
    given_up = await pool.fetchval(
        "SELECT given_up FROM scheduler_ticks WHERE name = $1", SCHEDULER
    )
    beats = await heard(pool, SCHEDULER)
    if given_up is None and not beats:
        return None
    last = beats[0] if beats else None
    problems = []
    silence = last.silence if last is not None else None
    if silence is None or silence > max_silence:
        problems.append("not running" if silence is None else f"not seen for {silence:.0f} s")
    for order, reason in json.loads(given_up or "{}").items():
        problems.append(f"gave up on {order}: {reason} (feedbackloop scheduler --order {order})")
    incidents = failing_incidents(await failing_by_job(pool))
    state, pending = (last.state, last.lag) if last is not None else ("new", 0)
    return ReaderHealth(SCHEDULER, 0, pending, 0, state, silence, problems, incidents)


async def instance_standing(
    pool: asyncpg.Pool,
    *,
    only: list[str] | None = None,
    max_lag: int = MAX_LAG,
    max_silence: float = MAX_SILENCE,
    inbound_group: str | None = None,
    head: int | None = None,
) -> list[ReaderHealth]:
    """How each reader of the log stands (all known ones, or ``only`` these), the inbound
    consumers of ``inbound_group`` (when Kafka is configured) and the scheduler."""
    at = await log_head(pool) if head is None else head
    of_log = None if only is None else [n for n in only if n not in (INBOUND, SCHEDULER)]
    report = await readers_health(pool, at, only=of_log, max_lag=max_lag, max_silence=max_silence)
    if inbound_group is not None and (only is None or INBOUND in only):
        report.append(
            await inbound_health(pool, inbound_group, max_lag=max_lag, max_silence=max_silence)
        )
    if only is None or SCHEDULER in only:
        scheduler = await scheduler_health(pool, max_silence=max_silence)
        if scheduler is not None:
            report.append(scheduler)
        elif only is not None:
            report.append(
                ReaderHealth(SCHEDULER, 0, 0, 0, "never started", None, ["never started"])
            )
    return report


@dataclass(frozen=True)
class FailingUnit:
    """One of the tenant's units a scheduled job fails on, tried again at every tick."""

    job: str
    unit: str
    order: str
    reason: str
    attempts: int
    first_failed_at: datetime
    last_failed_at: datetime


@dataclass(frozen=True)
class SchedulerOrders:
    """The scheduler's orders as an Operator of ``tenant`` sees them: its last tick, the
    orders being tried again (name → attempts) or given up (name → why), and the tenant's
    own failing units."""

    tick: datetime | None
    retrying: dict[str, int]
    given_up: dict[str, str]
    failing: list[FailingUnit]


async def scheduler_orders(pool: asyncpg.Pool | Connection, tenant_id: str) -> SchedulerOrders:
    row = await pool.fetchrow(
        "SELECT tick, attempts, given_up FROM scheduler_ticks WHERE name = $1", SCHEDULER
    )
    units = await pool.fetch(
        "SELECT job, unit, order_name, reason, attempts, first_failed_at, last_failed_at "
        "FROM scheduled_failures WHERE tenant_id = $1 ORDER BY last_failed_at DESC LIMIT 200",
        tenant_id,
    )
    return SchedulerOrders(
        tick=row["tick"] if row else None,
        retrying=json.loads(row["attempts"]) if row else {},
        given_up=json.loads(row["given_up"]) if row else {},
        failing=[
            FailingUnit(
                u["job"],
                u["unit"],
                u["order_name"],
                u["reason"],
                u["attempts"],
                u["first_failed_at"],
                u["last_failed_at"],
            )
            for u in units
        ],
    )
