"""The console's errors as pages (decisions D121): a person who mistypes an address, follows a
stale link or edits a filter by hand gets an HTML page in the console's layout — with the
navigation when signed in — that says what was wrong and links back, never the API's JSON.

The app's error handlers (``services.edge.error_handlers``) stay the API's: each handler here
answers a console path (``services.console.headers.is_console_path``) and hands any other to
the handler it replaces, so ``/factory/...`` keeps its one JSON shape.
"""

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException

from contracts.errors import DomainError
from services.console.console import Console, NotForYou, SignInFirst, Visitor
from services.console.headers import HEADERS, is_console_path
from services.edge.problems import status_of

log = logging.getLogger(__name__)

TITLES = {
    401: "Signed out",
    403: "Not permitted",
    404: "Not found",
    405: "Not a way to ask for this page",
    409: "Not possible now",
    422: "Not a valid address",
}
NOT_UNDERSTOOD = "Part of the address or the form is not one this page understands."


def install_error_pages(app: FastAPI, console: Console) -> None:
    """Answer the errors of console paths with a page; keep the API's answers for the rest."""
    api = dict(app.exception_handlers)

    async def the_apis(key: type[Exception], request: Request, error: Exception) -> Response:
        answer: Response = await api[key](request, error)
        return answer

    async def not_found(request: Request, error: HTTPException) -> Response:
        if not is_console_path(request.url.path):
            return await the_apis(HTTPException, request, error)
        if error.status_code == 404:
            what = f"There is no page at {request.url.path}."
        elif error.status_code == 405:
            what = f"{request.method} is not how this page is asked for."
        else:
            what = str(error.detail)
        answer = await error_page(console, request, error.status_code, what)
        answer.headers.update(error.headers or {})  # a 405's Allow
        return answer

    async def invalid(request: Request, error: RequestValidationError) -> Response:
        if not is_console_path(request.url.path):
            return await the_apis(RequestValidationError, request, error)
        problems = [
            {"field": ".".join(str(p) for p in e["loc"][1:]), "message": e["msg"]}
            for e in error.errors()
        ]
        return await error_page(console, request, 422, NOT_UNDERSTOOD, problems)

    async def refused(request: Request, error: DomainError) -> Response:
        if not is_console_path(request.url.path):
            return await the_apis(DomainError, request, error)
        status, field = status_of(error), error.details.get("field")
        if status != 422 or not field:  # a refusal by role, a conflict: its own words
            return await error_page(console, request, status, error.message)
        problems = [{"field": field, "message": error.message}]
        return await error_page(console, request, status, NOT_UNDERSTOOD, problems)

    async def failed(request: Request, error: Exception) -> Response:
        if not is_console_path(request.url.path):
            return await the_apis(Exception, request, error)
        log.error("%s %s failed", request.method, request.url.path, exc_info=error)
        what = "The service failed on this page; it is logged. Try again in a moment."
        return await error_page(console, request, 500, what, who=False)

    app.add_exception_handler(HTTPException, not_found)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, invalid)  # type: ignore[arg-type]
    app.add_exception_handler(DomainError, refused)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, failed)


async def error_page(
    console: Console,
    request: Request,
    status: int,
    what: str,
    problems: list[dict[str, Any]] | None = None,
    *,
    who: bool = True,
    back: dict[str, str] | None = None,
) -> Response:
    """The error page, linking back to the page the address was under (or the first page).
    ``who``: look the visitor up for the navigation (not after a failure, which may be the
    database's). ``back``: where the page links instead."""
    visitor = await signed_in(console, request) if who else None
    response = console.render(
        visitor,
        "error.html",
        status,
        title=TITLES.get(status, "Something went wrong"),
        what=what,
        problems=problems or [],
        back=back or back_to(console, request.url.path),
    )
    # A failure is answered outside the middleware (Starlette's ServerErrorMiddleware).
    response.headers.update({name.decode(): value.decode() for name, value in HEADERS})
    return response


async def signed_in(console: Console, request: Request) -> Visitor | None:
    """The visitor, to show the navigation; an error page asks no one to sign in."""
    try:
        return await console.visitor(request)
    except SignInFirst:
        return None
    except NotForYou as refusal:
        return refusal.visitor


def back_to(console: Console, path: str) -> dict[str, str]:
    """The page whose address ``path`` is under (``/inbox/x`` → the Inbox), else the start."""
    first = "/" + path.strip("/").split("/", 1)[0]
    for known in console.pages:
        if known.path == first:
            return {"path": known.path, "label": f"Back to {known.label}"}
    return {"path": "/", "label": "Back to the console's first page"}
