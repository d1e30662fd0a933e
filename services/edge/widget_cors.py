"""CORS for the widget's one cross-origin route, and for no other (decisions D234).

The widget posts from the embedding page's origin to ``/factory/widget/feedback``; a browser
asks first (a preflight: ``OPTIONS`` with ``Origin``), and reads an answer (a 201, or the 401
of an expired token) only when it names that origin. Starlette's ``CORSMiddleware`` answers
both, for the origins configured (FEEDBACKLOOP_WIDGET_ORIGINS, every tenant's): the preflight
carries no token, so it cannot tell the tenant; the route then holds the request to the one
origin its token was minted for. Every other path passes untouched: no other route is
reachable from another site's scripts. The module itself (``/widget/feedback.js``) is public
and answers ``Access-Control-Allow-Origin: *`` on its own.
"""

from collections.abc import Iterable

from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

WIDGET_PATHS = frozenset({"/factory/widget/feedback"})
ALLOWED_HEADERS = ("Authorization", "Content-Type", "Idempotency-Key")
PREFLIGHT_SECONDS = 600


class WidgetCors:
    """An ASGI middleware: ``CORSMiddleware`` on ``WIDGET_PATHS``, nothing elsewhere."""

    passes_lanes = True  # it never touches another path: the API's fast lanes stay in front

    def __init__(self, app: ASGIApp, origins: Iterable[str]) -> None:
        self.app = app
        self.cors = CORSMiddleware(
            app,
            allow_origins=sorted(set(origins)),
            allow_methods=("POST",),
            allow_headers=ALLOWED_HEADERS,
            allow_credentials=False,  # a bearer token, never a cookie
            max_age=PREFLIGHT_SECONDS,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in WIDGET_PATHS:
            await self.cors(scope, receive, send)
        else:
            await self.app(scope, receive, send)
