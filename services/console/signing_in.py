"""Signing in and out: with a personal API key, in one click as the printed development user
(the embedded default only), or at the configured issuer (``services.console.oidc``).

The sign-in form has no session to take a CSRF token from, so it carries one of its own,
echoed from a short-lived cookie (double submit): another site cannot sign a browser in as
someone else (decisions D60).
"""

import hmac
import secrets
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import RedirectResponse, Response

from contracts.sessions import EndConsoleSession
from services.console.console import CSRF_FIELD, Console
from services.console.sessions import COOKIE, new_session
from services.edge.parameters import command_id
from services.edge.problems import Forbidden, Unauthorized

PRE_COOKIE = "fl_console_signin"
Next = Annotated[str | None, Query(max_length=2048)]


def local(next_path: str | None) -> str:
    """Where to go after signing in: a path of this site only (never ``//host`` or a URL)."""
    if next_path and next_path.startswith("/") and not next_path.startswith("//"):
        return next_path
    return "/"


def sign_in_routes(console: Console) -> APIRouter:
    router = APIRouter(include_in_schema=False)

    def form(next_path: str | None, status: int = 200, refusal: str | None = None) -> Response:
        token = secrets.token_urlsafe(24)
        response = console.render(
            None,
            "sign_in.html",
            status,
            signin_csrf=token,
            next=local(next_path),
            developer=console.settings.dev_key is not None,
            oidc=console.settings.oidc,
            refusal=refusal,
        )
        response.set_cookie(
            PRE_COOKIE,
            token,
            max_age=600,
            httponly=True,
            samesite="strict",
            secure=console.settings.secure_cookie,
            path="/sign-in",
        )
        return response

    @router.get("/sign-in")
    async def sign_in_form(next: Next = None) -> Response:
        return form(next)

    async def signed_in(request: Request, bearer: str | None, via: str) -> Response:
        fields = await request.form()
        next_path = fields.get("next")
        next_path = next_path if isinstance(next_path, str) else None
        token, echoed = request.cookies.get(PRE_COOKIE), fields.get(CSRF_FIELD)
        if not token or not isinstance(echoed, str) or not hmac.compare_digest(token, echoed):
            return form(next_path, 403, "The sign-in form expired: please try again.")
        try:
            principal = await console.http.authorized(bearer, None)
        except (Unauthorized, Forbidden):
            return form(next_path, 401, "That key is not known, or it was revoked.")
        if not principal.roles:
            # Decisions D122: a session is ended by its holder through the role rules, which
            # a holder of no role passes none of; and no page shows such a person anything.
            refusal = "That key holds no role in its tenant: ask a platform admin for one."
            return form(next_path, 403, refusal)
        assert bearer is not None
        response = RedirectResponse(local(next_path), status_code=303)
        session = new_session(bearer, via, console.http.clock(), principal.roles)
        console.keep(response, session)
        response.delete_cookie(PRE_COOKIE, path="/sign-in")
        return response

    @router.post("/sign-in")
    async def with_key(request: Request) -> Response:
        key = (await request.form()).get("key")
        return await signed_in(request, key.strip() if isinstance(key, str) else None, "key")

    @router.post("/sign-in/developer")
    async def as_developer(request: Request) -> Response:
        if console.settings.dev_key is None:
            return form(None, 404, "There is no development user: keys are configured.")
        return await signed_in(request, console.settings.dev_key, "developer")

    @router.post("/sign-out")
    async def sign_out(request: Request) -> Response:
        """The session ends on the server (decisions D122): a copy of its cookie opens
        nothing from the next request on, in any process, once the read model holds it."""
        visitor = await console.writer(request)
        command = EndConsoleSession(session_id=visitor.session.id)
        outcome = await console.http.execute(command, visitor.principal, command_id(None))
        await console.http.keys_moved(outcome)
        response = RedirectResponse("/sign-in", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response

    return router
