"""What the audit trail costs (issue 43, item 2; decisions D223, D281): RecordFeedback through
the command bus in-process, one command a call from many callers (what an HTTP command runs)
and batches of 100 from one caller at one time (what the batch route runs), with the audit as
every process of the service builds it (``AuditTrail``) and without, in the same run,
alternating (without, with, without), so that each figure sees the machine as its baseline
does."""

import asyncio
import itertools
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import asyncpg
from bench_feedback import TENANT, body, feedback_bus

from contracts.feedback import RecordFeedback
from services.bus.audit import AuditTrail, ensure_table
from services.bus.issued import Issued
from services.store.event_store import EventStore


def issued(n: int, actor: str | None = None, at: datetime | None = None) -> Issued:
    command = RecordFeedback.model_validate(body(n))
    actor = actor or f"person-{n % 1000}"
    return Issued(command, TENANT, actor, str(uuid.uuid4()), at or datetime.now(UTC))


async def drive(
    store: EventStore, url: str, first: int, total: int, clients: int, batch: int, audited: bool
) -> dict[str, Any]:
    """``total`` commands by ``clients`` callers, ``batch`` a call (1: ``execute``)."""
    pool = await asyncpg.create_pool(url, min_size=1, max_size=2)
    async with pool.acquire() as conn:
        await ensure_table(conn)
    bus, loop_store = await feedback_bus(store, url)
    bus.audit = AuditTrail(pool) if audited else None
    starts = itertools.count(first, batch)

    async def caller() -> None:
        while (n := next(starts)) < first + total:
            if batch == 1:
                await bus.execute(issued(n))
            else:  # as the batch route issues them: one caller, one time (decisions D281)
                caller, at = f"person-{n % 1000}", datetime.now(UTC)
                commands = [issued(m, caller, at) for m in range(n, n + batch)]
                await bus.execute_batch(commands, None)

    t0 = time.perf_counter()
    try:
        await asyncio.gather(*(caller() for _ in range(clients)))
        await bus.flush_audit()  # the rows written count in the figure
        seconds = time.perf_counter() - t0
    finally:
        await bus.aclose()
        await loop_store.close()
        rows = await pool.fetchval("SELECT count(*) FROM audit_trail")
        await pool.close()
    return {
        "events": total,
        "seconds": round(seconds, 3),
        "events_per_s": round(total / seconds, 1),
        "audit_rows_total": rows,
    }


def audit_runs(
    store: EventStore, url: str, total: int, clients: int, batch: int
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Without the audit (half), with it (whole), without again (half)."""
    base = 10**8 * (2 if batch > 1 else 1)
    # Not timed: the 1,000 people's data keys made, the tables and caches warm, so that the
    # first figure does not pay for what the others then find done.
    asyncio.run(drive(store, url, base - 10**7, 2000, clients, 1, False))
    before = asyncio.run(drive(store, url, base, total // 2, clients, batch, False))
    audited = asyncio.run(drive(store, url, base + total, total, clients, batch, True))
    after = asyncio.run(drive(store, url, base + 3 * total, total // 2, clients, batch, False))
    return before, audited, after
