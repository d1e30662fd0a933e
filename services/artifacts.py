"""Content-addressed artifacts: the text of a comment, a corrected artifact (SPEC C06).

Feedback keeps references, never the text itself. An artifact is immutable and named by its
content, ``artifact:sha256:<hex>``: storing the same bytes twice gives the same reference.
Artifacts belong to one tenant.
"""

import hashlib
from typing import Annotated, Any

import asyncpg
from fastapi import APIRouter, Depends, Header, Request, Response

from services.api import Http
from services.auth import Principal
from services.errors import NotFound, Refused

SCHEME = "artifact:sha256:"
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


async def ensure_table(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext('artifacts'))")
        await conn.execute(DDL)


async def put_artifact(pool: asyncpg.Pool, tenant_id: str, content: bytes, media_type: str) -> str:
    digest = hashlib.sha256(content).hexdigest()
    await pool.execute(
        "INSERT INTO artifacts (tenant_id, sha256, media_type, content) VALUES ($1, $2, $3, $4) "
        "ON CONFLICT DO NOTHING",
        tenant_id,
        digest,
        media_type,
        content,
    )
    return SCHEME + digest


async def artifact_exists(pool: asyncpg.Pool, tenant_id: str, ref: str) -> bool:
    found = await pool.fetchval(
        "SELECT true FROM artifacts WHERE tenant_id = $1 AND sha256 = $2",
        tenant_id,
        ref.removeprefix(SCHEME),
    )
    return bool(found)


async def check_references(pool: asyncpg.Pool, tenant_id: str, refs: dict[str, str | None]) -> None:
    """A reference in our own scheme must name an artifact of the caller's tenant; other
    schemes are references to other systems, taken as they are (C08)."""
    for field, ref in refs.items():
        if ref and ref.startswith(SCHEME) and not await artifact_exists(pool, tenant_id, ref):
            raise Refused(f"{ref} is not an artifact of this tenant", field=field)


def artifact_routes(http: Http) -> APIRouter:
    router = APIRouter(prefix="/factory/artifacts", tags=["artifacts"])

    @router.post("", status_code=201)
    async def store(
        request: Request,
        principal: Annotated[Principal, Depends(http.scope("factory.feedback.write"))],
        content_type: Annotated[str, Header()] = "text/plain; charset=utf-8",
    ) -> dict[str, Any]:
        """Store the body as an immutable artifact; answers its reference."""
        content = await request.body()
        if not content:
            raise Refused("an artifact cannot be empty", field="body")
        if len(content) > MAX_ARTIFACT_BYTES:
            raise Refused(f"an artifact is at most {MAX_ARTIFACT_BYTES} bytes", field="body")
        ref = await put_artifact(http.pool, principal.tenant_id, content, content_type[:200])
        return {"ref": ref, "bytes": len(content)}

    @router.get("/{ref}")
    async def fetch(
        ref: str,
        principal: Annotated[Principal, Depends(http.scope("factory.feedback.read"))],
    ) -> Response:
        row = await http.pool.fetchrow(
            "SELECT media_type, content FROM artifacts WHERE tenant_id = $1 AND sha256 = $2",
            principal.tenant_id,
            ref.removeprefix(SCHEME),
        )
        if row is None:
            raise NotFound(f"no artifact {ref}", ref=ref)
        return Response(bytes(row["content"]), media_type=row["media_type"])

    return router
