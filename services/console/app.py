"""The console mounted on the API's app: its pages, signing in, the vendored static files and
the answers to a missing session and a missing CSRF token."""

from pathlib import Path

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from services.bus.asking import refused_as
from services.console.console import (
    Console,
    ConsoleSettings,
    CsrfMissing,
    NotForYou,
    SignInFirst,
    sign_in_path,
)
from services.console.error_pages import error_page, install_error_pages
from services.console.headers import ConsoleHeaders
from services.console.oidc import oidc_routes
from services.console.pages import PAGES
from services.console.sessions import SessionSeal
from services.console.signing_in import sign_in_routes
from services.edge.http import Http

STATIC = Path(__file__).parent / "static"


def install_console(app: FastAPI, http: Http, seal: SessionSeal, settings: ConsoleSettings) -> None:
    """Serve the console at ``/`` beside the API (whose routes are all under ``/factory``)."""
    console = Console(http, seal, settings, PAGES)
    app.include_router(home_routes(console))
    app.include_router(sign_in_routes(console))
    app.include_router(oidc_routes(console))
    for page in PAGES:
        app.include_router(page.routes(console))
    app.mount("/console/static", StaticFiles(directory=STATIC), name="console-static")
    app.add_middleware(ConsoleHeaders)  # decisions D120
    install_error_pages(app, console)  # decisions D121

    @app.exception_handler(SignInFirst)
    async def sign_in_first(request: Request, error: SignInFirst) -> Response:
        if request.method != "GET":
            # A write without a live session decides nothing; the person signs in again.
            what = "Your session ended, so nothing was changed: sign in again."
            to_sign_in = {"path": "/sign-in", "label": "Sign in"}
            answer = await error_page(console, request, 401, what, who=False, back=to_sign_in)
            answer.headers["HX-Redirect"] = "/sign-in"
            return answer
        target = sign_in_path(error.next_path)
        if request.headers.get("HX-Request"):
            return Response(status_code=204, headers={"HX-Redirect": target})
        return RedirectResponse(target, status_code=303)

    @app.exception_handler(NotForYou)
    async def not_for_you(request: Request, error: NotForYou) -> Response:
        return console.render(
            error.visitor, "not_permitted.html", 403, needed=", ".join(error.needed)
        )

    @app.exception_handler(CsrfMissing)
    async def csrf_missing(request: Request, error: CsrfMissing) -> Response:
        # Decisions D60: a write must echo the session's CSRF token, in the form or in the
        # X-CSRF-Token header htmx sends; without it nothing is decided.
        refused_as("csrf-missing")  # the audit's reason for this door's refusal (D110)
        # An HTML page as every console error is (decisions D121).
        what = "This form is not from this session, so nothing was changed: reload the page."
        problems = [{"field": "csrf", "message": "the session's CSRF token is missing or wrong"}]
        return await error_page(console, request, 403, what, problems)


def home_routes(console: Console) -> APIRouter:
    router = APIRouter(include_in_schema=False)

    @router.get("/")
    async def home(request: Request) -> Response:
        """The first page the person's roles show, or signing in."""
        visitor = await console.visitor(request)
        first = next((page for page in PAGES if visitor.holds(page.roles)), None)
        return RedirectResponse(first.path if first else "/my-reports", status_code=303)

    return router
