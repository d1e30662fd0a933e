"""Who is calling, and whether their key holds the scope a route needs: the bearer scheme,
``authorize`` (401 for an unknown key or a refused token, 403 for a missing scope) and the
dependency routes declare it with. A bearer that is a JWT goes to the token verifier when
issuers are configured (``services.edge.tokens``); any other bearer is an API key."""

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated

from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from services.edge.auth import KeyRing, Principal
from services.edge.door_audit import noted
from services.edge.problems import Forbidden, Unauthorized
from services.edge.token_claims import Refusal
from services.edge.tokens import TokenVerifier, looks_like_jwt
from services.permissions.rules import require

# Tokens are verified on threads of their own: an issuer slow to answer holds these, never
# the default executor's threads, which the store's reads and appends run on.
VERIFYING = ThreadPoolExecutor(max_workers=4, thread_name_prefix="bearer-tokens")

# Declared as the OpenAPI security scheme; a missing or malformed header is our 401, not
# FastAPI's 403.
BEARER = HTTPBearer(
    auto_error=False,
    description="An API key (`feedbackloop keys new`), or an access token (JWT) of a "
    "configured OAuth2 issuer (docs/security.md).",
)


def authorize(
    keys: KeyRing,
    key: str | None,
    required: str | None,
    tokens: TokenVerifier | None = None,
    *,
    widget: bool = False,
) -> Principal:
    """The principal of an API key, of a trusted issuer's token or of the service's own widget
    token, if it is valid and holds ``required`` (None: any valid one, where the scope needed
    is known only once the body is read). A widget token passes only where ``widget`` says
    the route is the widget's (decisions D233): anywhere else it is refused (403)."""
    signed = keys.signed
    if key is not None and signed is not None and signed.owns(key):
        try:
            bound = signed.principal(key, keys)
        except Refusal:
            raise Unauthorized() from None
        if not widget:
            raise Forbidden(required or "an API key", bound)
        return bound
    if key is not None and tokens and looks_like_jwt(key):
        try:
            principal: Principal | None = tokens.principal(key)
        except Refusal:
            raise Unauthorized() from None
    else:
        principal = None if key is None else keys.identify(key)
    if principal is None:
        raise Unauthorized()
    if required is not None and required not in principal.scopes:
        raise Forbidden(required, principal)
    return principal


def holding(
    keys: KeyRing, roles: tuple[str, ...], tokens: TokenVerifier | None = None
) -> Callable[..., Awaitable[Principal]]:
    """A dependency: the caller's principal, if its key or token holds one of ``roles`` (a
    read's role rule, decisions D23; 403 ``not-permitted`` naming them otherwise)."""

    async def check(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)],
    ) -> Principal:
        key = None if credentials is None else credentials.credentials
        principal = await authorize_off_loop(keys, key, None, tokens)
        require(principal.roles, roles, "this read")
        return principal

    return check


def requiring(
    keys: KeyRing,
    required: str,
    tokens: TokenVerifier | None = None,
    roles: tuple[str, ...] | None = None,
) -> Callable[..., Awaitable[Principal]]:
    """A dependency: the caller's principal, if its key or token holds ``required`` (else 401
    or 403 as ``authorize``) and, given ``roles``, one of them (a read's role rule, decisions
    D23: 403 ``not-permitted`` naming them)."""

    async def check(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)],
    ) -> Principal:
        key = None if credentials is None else credentials.credentials
        principal = await authorize_off_loop(keys, key, required, tokens)
        if roles is not None:
            require(principal.roles, roles, "this read")
        return principal

    return check


async def authorize_off_loop(
    keys: KeyRing,
    key: str | None,
    required: str | None,
    tokens: TokenVerifier | None,
    *,
    widget: bool = False,
) -> Principal:
    """``authorize`` for a coroutine: a token may need its issuer's discovery document or
    JWKS fetched (blocking I/O, bounded by FEEDBACKLOOP_OAUTH_TIMEOUT_SECONDS), so it is
    verified on a ``VERIFYING`` thread; a key is looked up on the loop (a dict lookup). The
    caller, once known, is noted for the audit of a refusal at this door (decisions D110)."""
    try:
        signed = keys.signed
        ours = key is not None and signed is not None and signed.owns(key)
        if key is not None and tokens and looks_like_jwt(key) and not ours:
            loop = asyncio.get_running_loop()
            verified = loop.run_in_executor(VERIFYING, authorize, keys, key, required, tokens)
            return noted(await verified)
        # A widget token is checked on the loop: its key is the service's own, at hand.
        return noted(authorize(keys, key, required, tokens, widget=widget))
    except Forbidden as refused:
        noted(refused.principal)  # a caller known, refused for a scope: audited (D110)
        raise
