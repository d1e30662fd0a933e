"""A dataset route's dependencies when they fail (SPEC C20, C53): the artifact store written
with retries and, failing still, a 503 that says nothing was published; the consent service
that cannot answer, a 503 that says nothing was shared."""

import asyncpg
from fastapi import Response
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from services.datasets.consent import ConsentUnavailable
from services.edge.http import Http
from services.edge.problems import error
from services.store.artifacts import put_artifact

SNAPSHOT_MEDIA_TYPE = "application/json"
STORE_ATTEMPTS = 3


class ArtifactStoreUnavailable(Exception):
    """SPEC C53: the artifact store is required; without it nothing is published."""


async def keep(
    http: Http, tenant_id: str, content: bytes, media_type: str = SNAPSHOT_MEDIA_TYPE
) -> str:
    """Store an artifact, retried with exponential backoff (SPEC C20) a few times; a store
    that still fails is reported, never skipped (C53)."""
    try:
        async for attempt in AsyncRetrying(
            stop=stop_after_attempt(STORE_ATTEMPTS),
            wait=wait_exponential(multiplier=0.1, max=2),
            retry=retry_if_exception_type((asyncpg.PostgresError, OSError)),
            reraise=True,
        ):
            with attempt:
                return await put_artifact(http.pool, tenant_id, content, media_type)
    except (asyncpg.PostgresError, OSError) as exc:
        raise ArtifactStoreUnavailable(f"{type(exc).__name__}: {exc}") from exc
    raise AssertionError("unreachable: the last attempt returns or raises")


def unavailable(exc: ArtifactStoreUnavailable) -> Response:
    response = error(
        503,
        "artifact-store-unavailable",
        f"the snapshot was not published: the artifact store failed ({exc})",
    )
    response.headers["Retry-After"] = "5"
    return response


def consent_unavailable(exc: ConsentUnavailable) -> Response:
    """C53: MemoryPromotionService degrades; for a share that means refused, nothing shared."""
    response = error(
        503,
        "consent-service-unavailable",
        f"nothing was shared: the consent service could not answer ({exc})",
        field="toTenant",
        reason="consent-service-unavailable",
        cause=str(exc),
    )
    response.headers["Retry-After"] = "30"
    return response
