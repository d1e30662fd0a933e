"""The outbox of agents' webhooks: a reader of the log that turns each notice (``notices``)
of an agent with a webhook into one delivery row, in the transaction that moves its position
(decisions D194). A restart resumes after the last batch written: no notice is lost, and none
is written twice (the row's key is (tenant, agent, notice id); a replay meets it and does
nothing). The sender (``sender``) posts the rows.

It keeps what it needs of the log in tables of its own, read only here: the agents' webhooks
(so a notice goes to a webhook set before it, never to one set after: subscribing replays no
history, D193) and each case's agent (a night's line names the case, its lift the agent).
These tables are not a read model: a rebuild of the read models leaves them, and the
delivered rows, as they are.
"""

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import asyncpg

from projections import events as ev
from services.followers.reader import Connection, Positioned
from services.owners.notices import (
    Notice,
    case_failing,
    failing,
    proposal_raised,
    report_addressed,
)

NAME = "agent-webhooks"
SCHEMA = "agent_webhooks"
SUBSCRIBED = "services.owners.domain:AgentWebhook.Subscribed"
WITHDRAWN = "services.owners.domain:AgentWebhook.Withdrawn"
STARTED = "services.owners.domain:AgentWebhook.Started"
AGENT_OWNER_NOTIFIED = "services.reports.domain:Report.AgentOwnerNotified"

DDL = f"""
CREATE SCHEMA IF NOT EXISTS {SCHEMA};
CREATE TABLE IF NOT EXISTS {SCHEMA}.webhooks (
    webhook_id uuid PRIMARY KEY,
    tenant_id text NOT NULL,
    agent text NOT NULL,
    url text,
    secret text,
    UNIQUE (tenant_id, agent)
);
CREATE TABLE IF NOT EXISTS {SCHEMA}.case_agents (
    case_id uuid PRIMARY KEY,
    tenant_id text NOT NULL,
    agent text NOT NULL
);
CREATE TABLE IF NOT EXISTS {SCHEMA}.deliveries (
    tenant_id text NOT NULL,
    agent text NOT NULL,
    notice_id uuid NOT NULL,
    kind text NOT NULL,
    body jsonb NOT NULL,
    state text NOT NULL DEFAULT 'pending',
    attempts int NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_status int,
    last_error text,
    noticed_at timestamptz NOT NULL,
    settled_at timestamptz,
    last_attempt_at timestamptz,
    position bigint NOT NULL,
    PRIMARY KEY (tenant_id, agent, notice_id)
);
CREATE INDEX IF NOT EXISTS deliveries_attempted ON {SCHEMA}.deliveries
    (tenant_id, agent, last_attempt_at DESC) WHERE last_attempt_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS deliveries_due ON {SCHEMA}.deliveries (next_attempt_at)
    WHERE state = 'pending';
"""


async def create_tables(pool: asyncpg.Pool) -> None:
    # Two processes starting at once must not race on CREATE IF NOT EXISTS.
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", SCHEMA)
        await conn.execute(DDL)


class AgentWebhookOutbox:
    """The reader; ``source`` is the CloudEvents source the bodies name."""

    name = NAME
    transactional = True
    topics = (STARTED, SUBSCRIBED, WITHDRAWN, AGENT_OWNER_NOTIFIED, ev.PROPOSAL_RAISED,
              ev.CASE_LIFTED, ev.NIGHT_CASE_FINISHED)  # fmt: skip

    def __init__(self, pool: asyncpg.Pool, source: str) -> None:
        self.pool, self.source = pool, source

    async def open(self, say: Callable[[str], None]) -> None:
        await create_tables(self.pool)

    async def close(self) -> None:
        return None

    async def apply(self, conn: Connection, batch: Sequence[Positioned]) -> None:
        for item in batch:
            event = item.event
            match ev.topic_of(event):
                case "services.owners.domain:AgentWebhook.Started":
                    await conn.execute(
                        f"INSERT INTO {SCHEMA}.webhooks (webhook_id, tenant_id, agent) "
                        "VALUES ($1, $2, $3) ON CONFLICT (webhook_id) DO NOTHING",
                        event.originator_id, event.tenant_id, event.agent,
                    )  # fmt: skip
                case "services.owners.domain:AgentWebhook.Subscribed":
                    await conn.execute(
                        f"UPDATE {SCHEMA}.webhooks SET url = $2, secret = $3 "
                        "WHERE webhook_id = $1",
                        event.originator_id, event.url, event.secret,
                    )  # fmt: skip
                case "services.owners.domain:AgentWebhook.Withdrawn":
                    await self._withdrawn(conn, event)
                case ev.CASE_LIFTED:
                    await conn.execute(
                        f"INSERT INTO {SCHEMA}.case_agents VALUES ($1, $2, $3) "
                        "ON CONFLICT (case_id) DO UPDATE SET agent = EXCLUDED.agent",
                        event.originator_id, event.tenant_id, event.agent,
                    )  # fmt: skip
                case "services.reports.domain:Report.AgentOwnerNotified":
                    await self._notice(conn, report_addressed(event), item.position)
                case ev.PROPOSAL_RAISED:
                    await self._notice(conn, proposal_raised(event), item.position)
                case ev.NIGHT_CASE_FINISHED if failing(event.line):
                    agent = await conn.fetchval(
                        f"SELECT agent FROM {SCHEMA}.case_agents WHERE case_id = $1::uuid",
                        event.line["case"],
                    )
                    if agent is not None:
                        await self._notice(conn, case_failing(event, agent), item.position)

    async def _withdrawn(self, conn: Connection, event: Any) -> None:
        """D193: a withdrawn webhook hears nothing more, its pending retries included."""
        row = await conn.fetchrow(
            f"UPDATE {SCHEMA}.webhooks SET url = NULL, secret = NULL WHERE webhook_id = $1 "
            "RETURNING tenant_id, agent",
            event.originator_id,
        )
        if row is not None:
            await conn.execute(
                f"UPDATE {SCHEMA}.deliveries SET state = 'withdrawn', settled_at = now() "
                "WHERE tenant_id = $1 AND agent = $2 AND state = 'pending'",
                row["tenant_id"], row["agent"],
            )  # fmt: skip

    async def _notice(self, conn: Connection, notice: Notice, position: int) -> None:
        subscribed = await conn.fetchval(
            f"SELECT url IS NOT NULL FROM {SCHEMA}.webhooks WHERE tenant_id = $1 AND agent = $2",
            notice.tenant_id, notice.agent,
        )  # fmt: skip
        if not subscribed:
            return
        await conn.execute(
            f"INSERT INTO {SCHEMA}.deliveries (tenant_id, agent, notice_id, kind, body, "
            "noticed_at, position) VALUES ($1, $2, $3::uuid, $4, $5::jsonb, $6::timestamptz, $7) "
            "ON CONFLICT DO NOTHING",
            notice.tenant_id, notice.agent, notice.id, notice.kind,
            json.dumps(notice.cloudevent(self.source)), datetime.fromisoformat(notice.at), position,
        )  # fmt: skip
