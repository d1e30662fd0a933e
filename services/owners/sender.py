"""The sender of agents' webhooks: posts the outbox's due rows, signed as every webhook of the
service is (``services.webhooks.signed.post_signed``), and records each attempt on its row
(decisions D194, D195).

- Once: a row delivered (2xx) or given up is never posted again; a row is claimed for one
  lease before it is posted, so two senders never post it at once, and a sender that dies
  mid-post leaves it to be posted again when the lease ends (the receiver de-duplicates on
  ``X-Feedbackloop-Delivery``, the CloudEvent's id).
- Retried with backoff: network errors, 5xx, 408 and 429 again after
  ``backoff * 2**(attempts-1)`` seconds (at most ``max_backoff``), up to ``max_attempts``;
  any other 4xx is final at once. Either final state keeps the last status and error.
- Never blocked by another: each round takes at most one due row per agent, oldest first, and
  posts them together, each with its own timeout; a row waiting for its retry is not due, so
  an endpoint that keeps failing delays only its own agent's notices.
"""

import asyncio
import contextlib
import json
import logging
from dataclasses import dataclass
from typing import Any

import asyncpg
import httpx

from services.owners.outbox import SCHEMA, create_tables
from services.webhooks.signed import post_signed

log = logging.getLogger(__name__)
NAME = "agent-webhook-sender"
MAX_ERROR = 500  # characters of an error kept on the row


@dataclass(frozen=True)
class SenderSettings:
    max_attempts: int = 8
    backoff_seconds: float = 1.0
    max_backoff_seconds: float = 3600.0
    timeout_seconds: float = 10.0
    batch: int = 50  # agents a round
    idle_seconds: float = 1.0  # the pause when nothing is due

    @property
    def lease_seconds(self) -> float:
        return self.timeout_seconds + 5.0

    def backoff(self, attempts: int) -> float:
        """The pause after the ``attempts``-th failed attempt."""
        return float(min(self.backoff_seconds * 2 ** (attempts - 1), self.max_backoff_seconds))


CLAIM = f"""
UPDATE {SCHEMA}.deliveries d
SET next_attempt_at = now() + make_interval(secs => $2)
FROM (
    SELECT * FROM (
        SELECT DISTINCT ON (tenant_id, agent) tenant_id, agent, notice_id, next_attempt_at
        FROM {SCHEMA}.deliveries
        WHERE state = 'pending' AND next_attempt_at <= now()
        ORDER BY tenant_id, agent, next_attempt_at, position
    ) oldest ORDER BY next_attempt_at LIMIT $1
) due, {SCHEMA}.webhooks w
WHERE d.tenant_id = due.tenant_id AND d.agent = due.agent AND d.notice_id = due.notice_id
  AND d.state = 'pending' AND d.next_attempt_at <= now()
  AND w.tenant_id = d.tenant_id AND w.agent = d.agent AND w.url IS NOT NULL
RETURNING d.tenant_id, d.agent, d.notice_id, d.body, d.attempts, w.url, w.secret
"""


class AgentWebhookSender:
    def __init__(self, pool: asyncpg.Pool, settings: SenderSettings | None = None) -> None:
        self.pool = pool
        self.settings = settings or SenderSettings()

    async def run(self, stop: asyncio.Event) -> None:
        """Send until ``stop``; supervised, so a fault restarts it (nothing is lost: the rows
        stay)."""
        await create_tables(self.pool)
        async with httpx.AsyncClient(timeout=self.settings.timeout_seconds) as client:
            while not stop.is_set():
                if await self.send_due(client) == 0:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), self.settings.idle_seconds)

    async def send_due(self, client: httpx.AsyncClient) -> int:
        """One round: claim the due rows, post them together, record each; answers how many."""
        rows = await self.pool.fetch(CLAIM, self.settings.batch, self.settings.lease_seconds)
        await asyncio.gather(*(self._send(client, row) for row in rows))
        return len(rows)

    async def _send(self, client: httpx.AsyncClient, row: Any) -> None:
        body = row["body"]
        raw = (body if isinstance(body, str) else json.dumps(body)).encode()
        status, error, permanent = await post_signed(
            client, row["url"], row["secret"], raw, str(row["notice_id"])
        )
        attempts = row["attempts"] + 1
        if error is None:
            state = "delivered"
        elif permanent or attempts >= self.settings.max_attempts:
            state = "given-up"
            log.warning("agent webhook of %s: %s given up: %s", row["agent"], row["notice_id"],
                        error)  # fmt: skip
        else:
            state = "pending"
        await self.pool.execute(
            f"UPDATE {SCHEMA}.deliveries SET state = $4, attempts = $5, last_status = $6, "
            "last_error = $7, last_attempt_at = now(), "
            "next_attempt_at = now() + make_interval(secs => $8), "
            "settled_at = CASE WHEN $4 = 'pending' THEN NULL ELSE now() END "
            "WHERE tenant_id = $1 AND agent = $2 AND notice_id = $3 AND state = 'pending'",
            row["tenant_id"], row["agent"], row["notice_id"], state, attempts, status,
            None if error is None else error[:MAX_ERROR], self.settings.backoff(attempts),
        )  # fmt: skip
