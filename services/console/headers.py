"""The security headers of every console response (decisions D120).

The console's pages load only their own files: the vendored htmx, ``charter.js`` and
``console.css``, all under ``/console/static``. So the policy allows scripts and styles of this
origin only, no inline script or style, no plugin; a form posts to this site only; and no
other site may frame a page (``frame-ancestors 'none'``, and ``X-Frame-Options`` for browsers
that predate it), which keeps the sign-in form out of another origin's iframe.

The headers are set by one ASGI middleware on every path that is not the API's (``/factory``,
and FastAPI's pages of the API's documentation, whose inline script this policy would stop):
pages, redirects, static files and the console's error pages alike. The API keeps its own
answers untouched, so the fast lanes (``services.edge.fast_lane``), which serve only API
paths, stay in front of it (``passes_lanes``).
"""

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",  # the layout's empty icon is a data: URL
        "connect-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "object-src 'none'",
    )
)
HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
)
# Not the console's: the API and its documentation (Swagger UI and ReDoc run inline script).
API_PREFIXES = ("/factory", "/docs", "/redoc", "/openapi.json")


def is_console_path(path: str) -> bool:
    """Whether ``path`` is the console's (everything the API does not answer)."""
    return not any(path == p or path.startswith(p + "/") for p in API_PREFIXES)


class ConsoleHeaders:
    """Adds ``HEADERS`` to every response of a console path."""

    passes_lanes = True  # it never touches an API path, which is all a fast lane serves

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_console_path(scope["path"]):
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(name, value) for name, value in HEADERS if name not in names]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, with_headers)
