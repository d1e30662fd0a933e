"""What the outbox of agents' webhooks says of their health (decisions D196): read by the
webhook's GET, the Operations page and ``GET /factory/operations/agent-webhooks``.

A webhook is failing when its latest attempt failed (retries pending or given up); one
delivered attempt since clears it, as a receiver back up is no incident.
"""

from typing import Any

import asyncpg

from services.owners.outbox import SCHEMA

HEALTH = f"""
SELECT w.agent, w.url,
       (SELECT count(*) FROM {SCHEMA}.deliveries d
         WHERE d.tenant_id = w.tenant_id AND d.agent = w.agent AND d.state = 'pending') AS pending,
       (SELECT count(*) FROM {SCHEMA}.deliveries d
         WHERE d.tenant_id = w.tenant_id AND d.agent = w.agent AND d.state = 'given-up')
         AS given_up,
       last.last_error, last.last_status, last.last_attempt_at, last.attempts, last.state
FROM {SCHEMA}.webhooks w
LEFT JOIN LATERAL (
    SELECT d.last_error, d.last_status, d.last_attempt_at, d.attempts, d.state
    FROM {SCHEMA}.deliveries d
    WHERE d.tenant_id = w.tenant_id AND d.agent = w.agent AND d.last_attempt_at IS NOT NULL
    ORDER BY d.last_attempt_at DESC LIMIT 1
) last ON true
WHERE w.tenant_id = $1 AND w.url IS NOT NULL AND ($2::text IS NULL OR w.agent = $2)
ORDER BY w.agent
"""


def shown(row: Any) -> dict[str, Any]:
    failing, at = row["last_error"] is not None, row["last_attempt_at"]
    return {
        "agent": row["agent"],
        "url": row["url"],
        "failing": failing,
        "lastError": row["last_error"] if failing else None,
        "lastStatus": row["last_status"],
        "lastAttemptAt": None if at is None else at.isoformat(),
        "pending": row["pending"],
        "givenUp": row["given_up"],
    }


async def webhook_health(
    pool: asyncpg.Pool, tenant_id: str, agent: str | None = None
) -> list[dict[str, Any]]:
    """Each agent's webhook of the tenant (or the one of ``agent``), with its health. Nothing
    before the outbox has made its tables (a fresh instance): none."""
    exists = await pool.fetchval("SELECT to_regclass($1)", f"{SCHEMA}.deliveries")
    if exists is None:
        return []
    return [shown(row) for row in await pool.fetch(HEALTH, tenant_id, agent)]


async def failing_webhooks(pool: asyncpg.Pool, tenant_id: str) -> list[dict[str, Any]]:
    """D196: what Operations shows, the tenant's failing agents' webhooks."""
    return [found for found in await webhook_health(pool, tenant_id) if found["failing"]]
