"""Content-addressed artifacts: the text of a comment, a corrected artifact (SPEC C06).

Feedback keeps references, never the text itself. An artifact is immutable and named by its
content, ``artifact:sha256:<hex>``: storing the same bytes twice gives the same reference.
Artifacts belong to one tenant; a reference is checked and kept in its normal spelling
(``contracts.artifact_refs``). This is the store; the HTTP routes are in
``services.artifacts.api`` (the store is read by the Kafka path too, and never reaches up
into HTTP).
"""

import hashlib

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from contracts.artifact_refs import SCHEME, normal_refs
from contracts.errors import NotFound, Refused, echoed

MAX_ARTIFACT_BYTES = 1024 * 1024
DDL = """
CREATE TABLE IF NOT EXISTS artifacts (
    tenant_id text NOT NULL,
    sha256 text NOT NULL,
    media_type text NOT NULL,
    content bytea NOT NULL,
    stored_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, sha256)
);
"""


async def ensure_table(conn: asyncpg.Connection | PoolConnectionProxy) -> None:
    """Idempotent; call it at start under the start-up DDL lock
    (services/processes/opening.py)."""
    await conn.execute(DDL)


def artifact_ref(content: bytes) -> str:
    """The reference ``content`` is stored under: known before it is stored, so a decision can
    name it first (a dataset version) and the bytes be stored only if the decision holds."""
    return SCHEME + hashlib.sha256(content).hexdigest()


async def put_artifact(pool: asyncpg.Pool, tenant_id: str, content: bytes, media_type: str) -> str:
    ref = artifact_ref(content)
    await pool.execute(
        "INSERT INTO artifacts (tenant_id, sha256, media_type, content) VALUES ($1, $2, $3, $4) "
        "ON CONFLICT DO NOTHING",
        tenant_id,
        ref.removeprefix(SCHEME),
        media_type,
        content,
    )
    return ref


async def artifact_exists(pool: asyncpg.Pool, tenant_id: str, ref: str) -> bool:
    """Whether this tenant has the artifact; ``ref`` in its normal spelling."""
    found = await pool.fetchval(
        "SELECT true FROM artifacts WHERE tenant_id = $1 AND sha256 = $2",
        tenant_id,
        ref.removeprefix(SCHEME),
    )
    return bool(found)


async def check_references(pool: asyncpg.Pool, tenant_id: str, refs: dict[str, str | None]) -> None:
    """A reference in our own scheme, in any spelling of it, must name an artifact of the
    caller's tenant; other schemes are references to other systems, taken as they
    are (C08)."""
    for field, ref in normal_refs(refs).items():
        if ref and ref.startswith(SCHEME) and not await artifact_exists(pool, tenant_id, ref):
            raise Refused(f"{ref} is not an artifact of this tenant", field=field)


async def get_artifact(pool: asyncpg.Pool, tenant_id: str, ref: str) -> tuple[str, bytes]:
    """The artifact's media type and bytes; NotFound if this tenant has no such artifact."""
    row = await pool.fetchrow(
        "SELECT media_type, content FROM artifacts WHERE tenant_id = $1 AND sha256 = $2",
        tenant_id,
        ref.lower().removeprefix(SCHEME),  # any spelling of the scheme names the same bytes
    )
    if row is None:
        raise NotFound(f"no artifact {echoed(ref)}", ref=echoed(ref))
    return str(row["media_type"]), bytes(row["content"])


async def delete_artifacts(pool: asyncpg.Pool, tenant_id: str, refs: list[str]) -> int:
    """Delete these artifacts of the tenant (erasure and retention of a comment's text):
    the feedback referencing them keeps the reference, which then finds nothing."""
    deleted = await pool.fetch(
        "DELETE FROM artifacts WHERE tenant_id = $1 AND sha256 = ANY($2::text[]) RETURNING 1",
        tenant_id,
        [ref.lower().removeprefix(SCHEME) for ref in refs],
    )
    return len(deleted)
