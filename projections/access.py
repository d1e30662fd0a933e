"""Keys and role grants as they stand (SPEC C52; decisions D28): who holds which key (its
hash only) and which role, who issued or granted it and when.

Answers ``GET /factory/keys`` and ``GET /factory/roles`` (tenant-scoped), and gives every API
process the whole table of live keys and grants (``standing``) to authenticate with, read
afresh each time the read model moves (decisions D29).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg

from projections import events as ev
from projections.agent_register import AgentRegister
from projections.ended_sessions import EndedSessions
from projections.read_model import schema_named
from services.followers.positions import read_position
from services.followers.reader import Connection, Positioned

NAME = "access"
SCHEMA = schema_named(NAME)
OWN = frozenset((ev.KEY_ISSUED, ev.KEY_REVOKED, ev.ROLE_GRANTED, ev.ROLE_REVOKED))
REGISTER = AgentRegister()  # the agent register's list, on this reader (decisions D78)
REGISTER_TOPICS = frozenset(REGISTER.handles)
ENDED = EndedSessions()  # the console's ended sessions, on this reader (decisions D122)
ENDED_TOPICS = frozenset(ENDED.handles)


class Access:
    name = NAME
    handles = tuple(sorted(OWN | REGISTER_TOPICS | ENDED_TOPICS))

    def ddl(self, schema: str) -> str:
        return (
            f"""
        CREATE TABLE IF NOT EXISTS {schema}.keys (
            key_id uuid PRIMARY KEY,
            tenant_id text NOT NULL,
            sha256 text NOT NULL,
            subject text NOT NULL,
            scopes text[] NOT NULL,
            service boolean NOT NULL,
            issued_by text NOT NULL,
            issued_at timestamptz NOT NULL,
            revoked_by text,
            revoked_at timestamptz,
            position bigint NOT NULL
        );
        CREATE INDEX IF NOT EXISTS keys_by_tenant ON {schema}.keys (tenant_id, position);
        CREATE TABLE IF NOT EXISTS {schema}.grants (
            tenant_id text NOT NULL,
            subject text NOT NULL,
            role text NOT NULL,
            granted_by text NOT NULL,
            granted_at timestamptz NOT NULL,
            PRIMARY KEY (tenant_id, subject, role)
        );
        """
            + REGISTER.ddl(schema)
            + ENDED.ddl(schema)
        )

    async def apply(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        await self.apply_own(conn, schema, [p for p in batch if ev.topic_of(p.event) in OWN])
        register = [p for p in batch if ev.topic_of(p.event) in REGISTER_TOPICS]
        if register:  # another table: the order between the parts does not matter
            await REGISTER.apply(conn, schema, register)
        ended = [p for p in batch if ev.topic_of(p.event) in ENDED_TOPICS]
        if ended:
            await ENDED.apply(conn, schema, ended)

    async def apply_own(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        keys, grants = f"{schema}.keys", f"{schema}.grants"
        for p in batch:
            e = p.event
            match ev.topic_of(e):
                case ev.KEY_ISSUED:
                    await conn.execute(
                        f"INSERT INTO {keys} (key_id, tenant_id, sha256, subject, scopes, "
                        "service, issued_by, issued_at, position) "
                        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING",
                        e.originator_id, e.tenant_id, e.sha256, e.subject, list(e.scopes),
                        e.service, e.by, e.timestamp, p.position,
                    )  # fmt: skip
                case ev.KEY_REVOKED:
                    await conn.execute(
                        f"UPDATE {keys} SET revoked_by = $2, revoked_at = $3 WHERE key_id = $1",
                        e.originator_id, e.by, e.timestamp,
                    )  # fmt: skip
                case ev.ROLE_GRANTED:
                    await conn.execute(
                        f"INSERT INTO {grants} (tenant_id, subject, role, granted_by, granted_at)"
                        " VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                        e.tenant_id, e.subject, e.role, e.by, e.timestamp,
                    )  # fmt: skip
                case ev.ROLE_REVOKED:
                    await conn.execute(
                        f"DELETE FROM {grants} WHERE tenant_id = $1 AND subject = $2 "
                        "AND role = $3",
                        e.tenant_id, e.subject, e.role,
                    )  # fmt: skip
                case _:
                    raise TypeError(f"access does not handle {type(e).__name__}")


@dataclass(frozen=True)
class StoredKey:
    sha256: str
    tenant_id: str
    subject: str
    scopes: tuple[str, ...]
    service: bool


@dataclass(frozen=True)
class Standing:
    """Every live key and every grant of every tenant, as of ``position`` of the read model."""

    keys: tuple[StoredKey, ...]
    grants: tuple[tuple[str, str, str], ...]  # (tenant, subject, role)
    position: int


async def standing(pool: asyncpg.Pool, schema: str = SCHEMA) -> Standing:
    """What every API process authenticates with, read in one snapshot with the position it
    stands at: a caller that waits for that position knows the rows include its change."""
    async with pool.acquire() as conn, conn.transaction(isolation="repeatable_read"):
        position = await read_position(conn, schema)
        key_rows = await conn.fetch(
            f"SELECT sha256, tenant_id, subject, scopes, service FROM {schema}.keys "
            "WHERE revoked_at IS NULL"
        )
        grant_rows = await conn.fetch(f"SELECT tenant_id, subject, role FROM {schema}.grants")
    keys = tuple(
        StoredKey(r["sha256"], r["tenant_id"], r["subject"], tuple(r["scopes"]), r["service"])
        for r in key_rows
    )
    grants = tuple((r["tenant_id"], r["subject"], r["role"]) for r in grant_rows)
    return Standing(keys, grants, position)


def key_view(row: asyncpg.Record) -> dict[str, Any]:
    return {
        "keyId": str(row["key_id"]),
        "subject": row["subject"],
        "scopes": list(row["scopes"]),
        "service": row["service"],
        "issuedBy": row["issued_by"],
        "issuedAt": row["issued_at"].isoformat(),
        "revoked": row["revoked_at"] is not None,
        "revokedBy": row["revoked_by"],
        "revokedAt": row["revoked_at"] and row["revoked_at"].isoformat(),
    }


async def list_keys(
    pool: asyncpg.Pool,
    tenant_id: str,
    *,
    before: int | None = None,
    limit: int = 50,
    schema: str = SCHEMA,
) -> tuple[list[dict[str, Any]], int | None]:
    """The tenant's keys, newest first, those issued before position ``before``; and the
    position to pass as ``before`` for the next page (None on the last)."""
    rows = await pool.fetch(
        f"SELECT * FROM {schema}.keys WHERE tenant_id = $1 "
        "AND ($2::bigint IS NULL OR position < $2) ORDER BY position DESC LIMIT $3",
        tenant_id,
        before,
        limit + 1,
    )
    last = rows[limit - 1]["position"] if len(rows) > limit else None
    return [key_view(row) for row in rows[:limit]], last


async def list_grants(
    pool: asyncpg.Pool,
    tenant_id: str,
    *,
    after: tuple[str, str] | None = None,
    limit: int = 50,
    schema: str = SCHEMA,
) -> tuple[list[dict[str, Any]], tuple[str, str] | None]:
    """The tenant's grants by subject then role, those after ``(subject, role)``; and the pair
    to continue after (None on the last page)."""
    subject, role = after if after is not None else (None, None)
    rows = await pool.fetch(
        f"SELECT * FROM {schema}.grants WHERE tenant_id = $1 "
        "AND ($2::text IS NULL OR (subject, role) > ($2, $3)) ORDER BY subject, role LIMIT $4",
        tenant_id,
        subject,
        role,
        limit + 1,
    )
    last = (rows[limit - 1]["subject"], rows[limit - 1]["role"]) if len(rows) > limit else None
    items = [
        {
            "subject": row["subject"],
            "role": row["role"],
            "grantedBy": row["granted_by"],
            "grantedAt": row["granted_at"].isoformat(),
        }
        for row in rows[:limit]
    ]
    return items, last
