"""``Console``: what every page needs — the API's runtime (``Http``), the session seal and its
clocks, the templates — and ``Visitor``, the signed-in person a page is rendered for.

A page never reaches the store or a table itself: it reads through the read models' query
functions and acts through ``Http.execute``, the call the API's routes make, so every rule
the API keeps (roles, stamped fields, tenants) holds here unchanged (decisions D59).
"""

import hmac
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape

from contracts.trace_links import trace_url
from projections.ended_sessions import session_ended
from services.access.sessions import persons_sessions_id_for, session_id_for
from services.console.sessions import COOKIE, Session, SessionSeal
from services.edge.auth import Principal
from services.edge.http import Http
from services.edge.problems import Forbidden, Unauthorized

TEMPLATES = Path(__file__).parent / "templates"
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf"


@dataclass(frozen=True)
class ConsoleSettings:
    """How sessions last and how people sign in (``services.processes.settings`` fills it)."""

    idle: timedelta = timedelta(minutes=30)
    absolute: timedelta = timedelta(hours=12)
    dev_key: str | None = None  # the printed development user's key, on the embedded default
    secure_cookie: bool = False  # under TLS: the cookie is sent over HTTPS only
    oidc: "OidcClient | None" = None
    # Each tenant's tracing UI as a URL template (decisions D265).
    trace_links: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class OidcClient:
    """The issuer people sign in at (authorization code with PKCE) and this client's id."""

    issuer: str
    client_id: str
    client_secret: str | None = None
    scope: str = "openid profile"


@dataclass(frozen=True)
class Visitor:
    """The person a page is for: who the bearer proves (tenant, subject, roles) and their
    session, whose CSRF token every form of the page carries."""

    principal: Principal
    session: Session

    def holds(self, roles: tuple[str, ...]) -> bool:
        """Whether any of ``roles`` is theirs (an empty tuple: any signed-in person)."""
        return not roles or not self.principal.roles.isdisjoint(roles)

    def must_hold(self, roles: tuple[str, ...]) -> None:
        """Refuse the page (``NotForYou``, a 403 naming ``roles``) unless one of ``roles`` is
        theirs. Asked before the item a page shows is read, so the answer is the same whatever
        the id names (decisions D123)."""
        if not self.holds(roles):
            raise NotForYou(self, roles)


class SignInFirst(Exception):
    """No live session: the person is sent to sign in, and back to ``next`` afterwards."""

    def __init__(self, next_path: str) -> None:
        self.next_path = next_path


class NotForYou(Exception):
    """A page whose reads the visitor's roles do not allow: answered 403 with the roles that
    would (the API's read rule, decisions D23), never with another's data."""

    def __init__(self, visitor: "Visitor", needed: tuple[str, ...]) -> None:
        self.visitor = visitor
        self.needed = needed


class CsrfMissing(Exception):
    """A write without the session's CSRF token: refused whatever else it carries."""


@dataclass
class Console:
    http: Http
    seal: SessionSeal
    settings: ConsoleSettings
    pages: tuple[Any, ...] = ()  # the Page entries (services.console.pages), for navigation
    templates: Environment = field(
        default_factory=lambda: Environment(
            loader=FileSystemLoader(TEMPLATES),
            autoescape=select_autoescape(["html"]),
            trim_blocks=True,
            lstrip_blocks=True,
        )
    )

    async def visitor(self, request: Request, reads: tuple[str, ...] = ()) -> Visitor:
        """The signed-in person of this request, authorized afresh from the session's bearer;
        an expired, foreign, revoked or ended session sends them to sign in. ``reads``: the
        roles, any one of which may read what the page shows (the API's rule for the same
        data); without one the page answers 403 naming them."""
        cookie = request.cookies.get(COOKIE)
        session = self.seal.open(cookie) if cookie else None
        now = self.http.clock()
        where = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        if session is None or session.expired(now, self.settings.idle, self.settings.absolute):
            raise SignInFirst(where)
        try:
            principal = await self.http.authorized(session.bearer, None)
        except (Unauthorized, Forbidden):
            raise SignInFirst(where) from None
        if await self.ended(principal, session):
            raise SignInFirst(where)  # signed out, or ended by an admin: no clock restarts
        if not principal.roles.issuperset(session.roles):
            raise SignInFirst(where)  # a role taken away ends the session (decisions D59)
        visitor = Visitor(principal, session.touched(now))
        visitor.must_hold(reads)
        return visitor

    async def ended(self, principal: Principal, session: Session) -> bool:
        """Whether the session was ended on the server (decisions D122), as the access read
        model every process reads holds it."""
        tenant, subject = principal.tenant_id, principal.subject
        return await session_ended(  # by the aggregates' ids: they outlive an erasure (D138)
            self.http.pool,
            tenant,
            session_id_for(tenant, subject, session.id),
            persons_sessions_id_for(tenant, subject),
            session.started,
        )

    async def writer(self, request: Request) -> Visitor:
        """``visitor`` for a write: the form's or the htmx request's CSRF token must be the
        session's (compared in constant time) before anything is decided."""
        visitor = await self.visitor(request)
        given = request.headers.get(CSRF_HEADER)
        if given is None:
            form = await request.form()
            value = form.get(CSRF_FIELD)
            given = value if isinstance(value, str) else None
        if given is None or not hmac.compare_digest(given, visitor.session.csrf):
            raise CsrfMissing()
        return visitor

    def render(
        self, visitor: Visitor | None, template: str, status: int = 200, **context: Any
    ) -> HTMLResponse:
        """A page in the layout, its navigation cut to what ``visitor``'s roles allow; the
        session is sealed again so its idle clock starts over."""
        nav = [page for page in self.pages if visitor is not None and visitor.holds(page.roles)]
        html = self.templates.get_template(template).render(
            visitor=visitor,
            nav=nav,
            csrf=visitor.session.csrf if visitor else None,
            trace_link=self.trace_link(visitor),
            **context,
        )
        response = HTMLResponse(html, status_code=status)
        if visitor is not None:
            self.keep(response, visitor.session)
        return response

    def trace_link(self, visitor: Visitor | None) -> Callable[[str, str | None], str] | None:
        """How a page links a trace to the visitor's tenant's tracing UI, or None when the
        tenant has none configured: the ids are then shown as text (decisions D265)."""
        template = self.settings.trace_links.get(visitor.principal.tenant_id) if visitor else None
        return None if template is None else partial(trace_url, template)

    def keep(self, response: Response, session: Session) -> None:
        """Set the session cookie: HttpOnly, SameSite=Strict, Secure under TLS."""
        response.set_cookie(
            COOKIE,
            self.seal.seal(session),
            max_age=int(self.settings.absolute.total_seconds()),
            httponly=True,
            samesite="strict",
            secure=self.settings.secure_cookie,
            path="/",
        )

    def see_other(self, request: Request, path: str, visitor: Visitor | None = None) -> Response:
        """After a write: to ``path`` (303), as htmx expects it too (``HX-Location``)."""
        response: Response
        if request.headers.get("HX-Request"):
            response = Response(status_code=204, headers={"HX-Location": path})
        else:
            response = RedirectResponse(path, status_code=303)
        if visitor is not None:
            self.keep(response, visitor.session)
        return response


def sign_in_path(next_path: str) -> str:
    return "/sign-in?next=" + quote(next_path, safe="")
