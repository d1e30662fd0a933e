"""The agent register as it stands, listed (SPEC C52, W13; decisions D25, D78): each agent of a
tenant with its maintainers and tracker repository.

Answers ``GET /factory/agents`` and ``feedbackloop agents list``, tenant-scoped, by agent name.
The register's aggregate (``services.permissions.agent_register``) is what the commands decide
with; this part only lists it, from event data alone, so a rebuild reproduces it.

It runs on the access read model's reader, in its schema (``projections.access``), as the
standing issues run on the digests' (decisions D57, D78): who may do what, one reader of the
log, and no connection more for each process that projects; this module owns its table, its
apply and its queries.
"""

from collections.abc import Sequence
from typing import Any

import asyncpg

from projections import events as ev
from services.followers.reader import Connection, Positioned

SCHEMA = "rm_access"  # the access read model's, whose reader applies this part


class AgentRegister:
    """A part of the access read model: its events, table and apply."""

    handles = (ev.AGENT_REGISTERED, ev.AGENT_MAINTAINERS_REPLACED, ev.AGENT_REPOSITORY_NAMED)

    def ddl(self, schema: str) -> str:
        # Keyed by the aggregate's id: a later event names the registration, not the agent.
        return f"""
        CREATE TABLE IF NOT EXISTS {schema}.agents (
            registration_id uuid PRIMARY KEY,
            tenant_id text NOT NULL,
            agent text NOT NULL,
            maintainers text[] NOT NULL,
            repository text,
            position bigint NOT NULL
        );
        CREATE UNIQUE INDEX IF NOT EXISTS agents_by_name ON {schema}.agents (tenant_id, agent);
        """

    async def apply(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        table = f"{schema}.agents"
        for p in batch:
            e = p.event
            match ev.topic_of(e):
                case ev.AGENT_REGISTERED:
                    await conn.execute(
                        f"INSERT INTO {table} (registration_id, tenant_id, agent, maintainers, "
                        "repository, position) VALUES ($1, $2, $3, $4, $5, $6) "
                        "ON CONFLICT DO NOTHING",
                        e.originator_id, e.tenant_id, e.agent, list(e.maintainers),
                        e.repository, p.position,
                    )  # fmt: skip
                case ev.AGENT_MAINTAINERS_REPLACED:
                    await conn.execute(
                        f"UPDATE {table} SET maintainers = $2, position = $3 "
                        "WHERE registration_id = $1",
                        e.originator_id, list(e.maintainers), p.position,
                    )  # fmt: skip
                case ev.AGENT_REPOSITORY_NAMED:
                    await conn.execute(
                        f"UPDATE {table} SET repository = $2, position = $3 "
                        "WHERE registration_id = $1",
                        e.originator_id, e.repository, p.position,
                    )  # fmt: skip
                case _:
                    raise TypeError(f"the register does not handle {type(e).__name__}")


async def list_agents(
    pool: asyncpg.Pool,
    tenant_id: str,
    *,
    after: str | None = None,
    limit: int = 50,
    maintainer: str | None = None,
    schema: str = SCHEMA,
) -> tuple[list[dict[str, Any]], str | None]:
    """The tenant's registered agents by name, those after ``after`` (with ``maintainer``:
    only those the register names them a maintainer of); and the name to continue after
    (None on the last page)."""
    rows = await pool.fetch(
        f"SELECT agent, maintainers, repository FROM {schema}.agents WHERE tenant_id = $1 "
        "AND ($2::text IS NULL OR agent > $2) AND ($4::text IS NULL OR $4 = ANY(maintainers)) "
        "ORDER BY agent LIMIT $3",
        tenant_id,
        after,
        limit + 1,
        maintainer,
    )
    last = rows[limit - 1]["agent"] if len(rows) > limit else None
    items = [
        {
            "agent": row["agent"],
            "maintainers": list(row["maintainers"]),
            "repository": row["repository"],
        }
        for row in rows[:limit]
    ]
    return items, last
