"""The HTTP doors' refusals in the audit (decisions D110): one wrapper the app itself calls
around every request (``RefusalAudit``), the API's routes, their fast lanes and the console's
pages alike, so that a route added later is audited without asking.

Around each request it opens an ``asking`` (``services.bus.asking``): the rule checks name
the caller in it (``noted``, from ``services.edge.scopes``), the error handlers the code a
refusal was answered with, the bus that it decided a command. When the answer is a refusal
the door decided itself, for a caller it knows, the audit gets the refusal's one row; what the
bus decided has its row from the bus already.

Which answers are refusals (D110): a 403 on any route (a scope, a role, a rule a route checks
itself), and a 404 or 409 of a write decided before its command (a route's own check of the
state). A request refused for its shape (400, 413, 415, 422) decided nothing and stays out,
as before (D30); so does a caller with no valid key (401): it names nobody of a tenant, and
a row per attempt would let a stranger fill the table (D111).
"""

from collections.abc import Callable, Iterable
from datetime import datetime

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.bus.asking import Asking, Caller, asking, caller_known
from services.bus.audit import AuditTrail
from services.edge.auth import Principal
from services.permissions import doors

READS = frozenset({"GET", "HEAD", "OPTIONS"})
CONSOLE = doors.CONSOLE.name
API = doors.HTTP.name
API_PREFIX = "/factory"  # every API route is under it; the console's pages are not


def noted(principal: Principal) -> Principal:
    """The caller of this request, as the audit names it."""
    caller_known(Caller(principal.tenant_id, principal.subject, principal.roles, principal.service))
    return principal


def door_of(path: str) -> str:
    return API if path == API_PREFIX or path.startswith(API_PREFIX + "/") else CONSOLE


def operation_of(scope: Scope) -> str:
    """The route's method and path template (``POST /factory/evals/cases/{case_id}/runs``):
    what was asked, without the values a path holds."""
    path = scope["path"]
    inner = getattr(scope.get("route"), "path_format", None)
    if not inner:
        # A fast lane served in front of the router: its path is plain (FastLane refuses
        # parameters), so the path is its template.
        return f"{scope['method']} {path}"
    # The route in the scope is the one a router declared, without the prefixes of the
    # routers that include it: its full template is the document's that ends with it and
    # whose literal head the path begins with (the console's pages are not in the document,
    # and have no prefix).
    template = inner
    for listed in documented(scope):
        head = listed[: len(listed) - len(inner)]
        if listed.endswith(inner) and path.startswith(head) and len(listed) > len(template):
            template = listed
    return f"{scope['method']} {template}"


def documented(scope: Scope) -> Iterable[str]:
    app = scope.get("app")
    openapi = getattr(app, "openapi", None)
    return () if openapi is None else openapi().get("paths", {}).keys()


def is_refusal(asked: Asking, method: str, status: int) -> bool:
    if status == 403:
        return True
    return status in (404, 409) and method not in READS and asked.refusal is not None


class RefusalAudit:
    """Each HTTP request inside an ``asking``; a refusal the door decided, audited. Called
    by the app itself (``services.edge.fast_lane.Api``), around its fast lanes too: as a
    middleware it would take the lanes off their fast path."""

    def __init__(self, audit: AuditTrail, clock: Callable[[], datetime]) -> None:
        self.audit, self.clock = audit, clock

    async def around(self, scope: Scope, receive: Receive, send: Send, app: ASGIApp) -> None:
        with asking(door_of(scope["path"])) as asked:

            async def answering(message: Message) -> None:
                if (
                    message["type"] == "http.response.start"
                    and asked.refused_here()
                    and is_refusal(asked, scope["method"], message["status"])
                ):
                    asked.asked = operation_of(scope)
                    self.audit.refused(asked, self.clock())
                await send(message)

            await app(scope, receive, answering)
