"""Agents' changes by tenant: what the next night re-runs first (decisions D240–D243).

Two kinds of change: the registry's ``AgentChanged`` (model, instructions or release), and an
accepted learning proposal's Draft release (``LearningProposal.ReleaseRecorded``, SPEC C32),
which changes the agent the proposal targets; a proposal's target is kept from its
``Raised`` event. The nightly runner asks ``changes_since`` for a tenant's agents; whether a
change is still owed to a case is decided by the planner (``services.nightly.planning``),
from the case's last run, so nothing here is ever marked consumed.

It runs on the nights read model's reader, in its schema (``projections.nights``): one reader
of the log for the nightly context's read models, as decisions D64 does for the digests';
this module owns its tables, its apply and its query. Only event data is used: the time a
change was recorded is its event's timestamp, so a rebuild reproduces the rows.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import asyncpg

from projections import events as ev
from services.followers.reader import Connection, Positioned

SCHEMA = "rm_nights"  # the nights read model's, whose reader applies this part
RELEASE = "release"
MAX_CHANGES = 500  # a night reads at most this many, newest first (a bound, never reached)


class AgentChanges:
    """A part of the nights read model: its events, tables and apply."""

    handles = (ev.AGENT_CHANGE_RECORDED, ev.PROPOSAL_RAISED, ev.PROPOSAL_RELEASE_RECORDED)

    def ddl(self, schema: str) -> str:
        return f"""
        CREATE TABLE IF NOT EXISTS {schema}.agent_changes (
            tenant_id text NOT NULL,
            change_id text NOT NULL,
            agent text NOT NULL,
            what text NOT NULL,
            before text,
            after text NOT NULL,
            changed_at timestamptz NOT NULL,
            recorded_at timestamptz NOT NULL,
            position bigint NOT NULL,
            PRIMARY KEY (tenant_id, change_id)
        );
        CREATE INDEX IF NOT EXISTS agent_changes_by_agent
            ON {schema}.agent_changes (tenant_id, agent, recorded_at);
        CREATE TABLE IF NOT EXISTS {schema}.proposal_targets (
            proposal_id uuid PRIMARY KEY,
            tenant_id text NOT NULL,
            agent text NOT NULL
        );
        """

    async def apply(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        for p in batch:
            e = p.event
            match ev.topic_of(e):
                case ev.AGENT_CHANGE_RECORDED:
                    await self._insert(
                        conn, schema, p, str(e.originator_id), e.agent, e.what, e.before,
                        e.after, datetime.fromisoformat(e.changed_at),
                    )  # fmt: skip
                case ev.PROPOSAL_RAISED:
                    await conn.execute(
                        f"INSERT INTO {schema}.proposal_targets (proposal_id, tenant_id, agent) "
                        "VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                        e.originator_id, e.tenant_id, e.target_asset_id,
                    )  # fmt: skip
                case ev.PROPOSAL_RELEASE_RECORDED:
                    await self._release(conn, schema, p)
                case _:
                    raise TypeError(f"agent changes do not handle {type(e).__name__}")

    async def _release(self, conn: Connection, schema: str, p: Positioned) -> None:
        """D240: an accepted proposal's release changes its target agent; ``from`` is the
        agent's release before it, as this read model saw them in log order."""
        e = p.event
        agent = await conn.fetchval(
            f"SELECT agent FROM {schema}.proposal_targets WHERE proposal_id = $1", e.originator_id
        )
        if agent is None:
            return  # a proposal raised before this part existed: rebuilt, it is found
        before = await conn.fetchval(
            f"SELECT after FROM {schema}.agent_changes WHERE tenant_id = $1 AND agent = $2 "
            "AND what = $3 ORDER BY position DESC LIMIT 1",
            e.tenant_id, agent, RELEASE,
        )  # fmt: skip
        await self._insert(
            conn, schema, p, f"release/{e.originator_id}", agent, RELEASE, before,
            e.release_id, e.timestamp,
        )  # fmt: skip

    async def _insert(
        self,
        conn: Connection,
        schema: str,
        p: Positioned,
        change_id: str,
        agent: str,
        what: str,
        before: str | None,
        after: str,
        changed_at: datetime,
    ) -> None:
        await conn.execute(
            f"INSERT INTO {schema}.agent_changes (tenant_id, change_id, agent, what, before, "
            "after, changed_at, recorded_at, position) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
            "$9) ON CONFLICT DO NOTHING",
            p.event.tenant_id, change_id, agent, what, before, after, changed_at,
            p.event.timestamp, p.position,
        )  # fmt: skip


async def changes_since(
    pool: asyncpg.Pool,
    tenant_id: str,
    agents: Sequence[str],
    since: datetime,
    *,
    schema: str = SCHEMA,
) -> list[dict[str, Any]]:
    """The tenant's changes of ``agents`` recorded after ``since``, newest first (at most
    ``MAX_CHANGES``); another tenant's never."""
    rows = await pool.fetch(
        f"SELECT * FROM {schema}.agent_changes WHERE tenant_id = $1 AND agent = ANY($2::text[]) "
        "AND recorded_at > $3 ORDER BY recorded_at DESC, position DESC LIMIT $4",
        tenant_id, list(agents), since, MAX_CHANGES,
    )  # fmt: skip
    return [
        {
            "agent": row["agent"],
            "what": row["what"],
            "from": row["before"],
            "to": row["after"],
            "at": row["changed_at"],
            "recordedAt": row["recorded_at"],
        }
        for row in rows
    ]
