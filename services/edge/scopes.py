"""Who is calling, and whether their key holds the scope a route needs: the bearer scheme,
``authorize`` (401 for an unknown key, 403 for a missing scope) and the dependency routes
declare it with."""

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from services.edge.auth import KeyRing, Principal
from services.edge.problems import Forbidden, Unauthorized
from services.permissions.rules import require

# Declared as the OpenAPI security scheme; a missing or malformed header is our 401, not
# FastAPI's 403.
BEARER = HTTPBearer(auto_error=False, description="An API key: `feedbackloop keys new`.")


def authorize(keys: KeyRing, key: str | None, required: str | None) -> Principal:
    """The principal of an API key, if the key is known and holds ``required`` (None: any
    known key, where the scope needed is known only once the body is read)."""
    principal = None if key is None else keys.identify(key)
    if principal is None:
        raise Unauthorized()
    if required is not None and required not in principal.scopes:
        raise Forbidden(required)
    return principal


def holding(keys: KeyRing, roles: tuple[str, ...]) -> Callable[..., Awaitable[Principal]]:
    """A dependency: the caller's principal, if its key holds one of ``roles`` (a read's
    role rule, decisions D23; 403 ``not-permitted`` naming them otherwise)."""

    async def check(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)],
    ) -> Principal:
        key = None if credentials is None else credentials.credentials
        principal = authorize(keys, key, None)
        require(principal.roles, roles, "this read")
        return principal

    return check


def requiring(keys: KeyRing, required: str) -> Callable[..., Awaitable[Principal]]:
    """A dependency: the caller's principal, if its key holds ``required``."""

    async def check(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)],
    ) -> Principal:
        key = None if credentials is None else credentials.credentials
        return authorize(keys, key, required)

    return check
