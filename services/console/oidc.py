"""Signing in at the configured issuer: OpenID Connect authorization code with PKCE (S256).

authlib makes the request (the grant URI, the S256 challenge, the random values); the code is
exchanged over httpx, the service's HTTP client (authlib's own httpx client is deprecated in
favour of another HTTP library, which would be a second one).

The browser is sent to the issuer with a fresh ``state``, ``nonce`` and code challenge; the
verifier, the state and where to go afterwards wait, sealed, in a cookie of the flow's own
(SameSite=Lax: the issuer's answer is a navigation from another site). On the way back the
code is exchanged for tokens, and the access token becomes the session's bearer: it is
authorized by the same verifier as an API request's token (``services.edge.tokens``), so the
issuer, audience, tenant and roles are checked once, in one place, and the session ends when
the token does (decisions D59).
"""

import secrets
from typing import Annotated, Any

import httpx
import orjson
from authlib.common.security import generate_token
from authlib.oauth2.rfc6749.parameters import prepare_grant_uri
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from fastapi import APIRouter, Query, Request
from fastapi.responses import RedirectResponse, Response

from services.console.console import Console, OidcClient
from services.console.sessions import new_session
from services.console.signing_in import local
from services.edge.problems import Forbidden, Unauthorized

FLOW_COOKIE = "fl_console_oidc"
CALLBACK = "/sign-in/oidc/callback"
Param = Annotated[str | None, Query(max_length=4096)]


async def discovered(client: OidcClient) -> dict[str, Any]:
    """The issuer's endpoints, from its discovery document."""
    async with httpx.AsyncClient(timeout=10) as http:
        answer = await http.get(f"{client.issuer.rstrip('/')}/.well-known/openid-configuration")
        answer.raise_for_status()
        document: dict[str, Any] = answer.json()
        return document


def oidc_routes(console: Console) -> APIRouter:
    router = APIRouter(include_in_schema=False)

    def redirect_uri(request: Request) -> str:
        return str(request.base_url).rstrip("/") + CALLBACK

    async def exchanged(
        oidc: OidcClient, request: Request, endpoint: str, code: str, verifier: str
    ) -> dict[str, Any]:
        """The code and its verifier for the tokens (RFC 6749 §4.1.3, RFC 7636 §4.5); a
        confidential client authenticates with its secret, a public one names itself."""
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri(request),
            "code_verifier": verifier,
        }
        secret = oidc.client_secret
        if not secret:
            form["client_id"] = oidc.client_id
        basic = (oidc.client_id, secret) if secret else None
        async with httpx.AsyncClient(timeout=10, auth=basic) as http:
            answer = await http.post(endpoint, data=form)
            answer.raise_for_status()
            tokens: dict[str, Any] = answer.json()
            return tokens

    @router.get("/sign-in/oidc")
    async def start(request: Request, next: Param = None) -> Response:
        oidc = console.settings.oidc
        if oidc is None:
            return RedirectResponse("/sign-in", status_code=303)
        endpoints = await discovered(oidc)
        verifier, state = generate_token(48), generate_token(24)
        url = prepare_grant_uri(
            endpoints["authorization_endpoint"],
            oidc.client_id,
            "code",
            redirect_uri=redirect_uri(request),
            scope=oidc.scope,
            state=state,
            nonce=secrets.token_urlsafe(16),
            code_challenge=create_s256_code_challenge(verifier),
            code_challenge_method="S256",
        )
        flow = {"state": state, "verifier": verifier, "next": local(next)}
        response = RedirectResponse(url, status_code=303)
        response.set_cookie(
            FLOW_COOKIE,
            console.seal.seal_text(orjson.dumps(flow).decode()),
            max_age=600,
            httponly=True,
            samesite="lax",
            secure=console.settings.secure_cookie,
            path=CALLBACK,
        )
        return response

    @router.get(CALLBACK)
    async def callback(
        request: Request,
        code: Param = None,
        state: Param = None,
        iss: Param = None,
        error: Param = None,
        error_description: Param = None,
        session_state: Param = None,
    ) -> Response:
        oidc = console.settings.oidc
        sealed = request.cookies.get(FLOW_COOKIE)
        flow_text = console.seal.open_text(sealed) if sealed else None
        flow = orjson.loads(flow_text) if flow_text else None
        if oidc is None or flow is None or error or not code:
            return refused(error_description or error or "the sign-in at the issuer expired")
        if state is None or not secrets.compare_digest(state, flow["state"]):
            return refused("the issuer's answer is not for this sign-in")
        endpoints = await discovered(oidc)
        if iss is not None and iss != endpoints.get("issuer"):
            return refused("the answer names another issuer")  # RFC 9207: no mix-up
        try:
            tokens = await exchanged(
                oidc, request, endpoints["token_endpoint"], code, flow["verifier"]
            )
        except (httpx.HTTPError, ValueError) as failure:  # said to the person, not raised
            return refused(f"the issuer refused the code: {type(failure).__name__}")
        bearer = tokens.get("access_token")
        if not isinstance(bearer, str):
            return refused("the issuer answered no access token")
        try:
            principal = await console.http.authorized(bearer, None)
        except (Unauthorized, Forbidden):
            return refused("the issuer's token does not grant this service to you")
        if not principal.roles:  # decisions D122, as with a key (services.console.signing_in)
            return refused("you hold no role in your tenant: ask a platform admin for one")
        # A page, not a redirect: the cookie is SameSite=Strict, and a redirect at the end of
        # a navigation another site began would be sent without it.
        response = console.render(None, "signed_in.html", next=flow["next"])
        session = new_session(bearer, "oidc", console.http.clock(), principal.roles)
        console.keep(response, session)
        response.delete_cookie(FLOW_COOKIE, path=CALLBACK)
        return response

    def refused(reason: str) -> Response:
        return console.render(None, "sign_in_failed.html", 401, reason=reason)

    return router
