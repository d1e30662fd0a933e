"""The fast lane of a command route: its commonest request answered without FastAPI's
dependency solving and middleware layers, the route itself as the reference.

``FastLane`` takes a route's commonest request only (a POST with no query string, a
well-formed ``Authorization: Bearer`` header and at most one ``Idempotency-Key`` of 1–200
characters) and hands it to ``endpoint``, the same code the route runs, given the body, the
key and the Idempotency-Key. Every other request is the route's, so each refusal the route
makes before its body is read stays the route's own; what the endpoint raises is answered by
the app's error handlers, as the route's errors are. The route stays the declaration in
``/openapi.json``; the lane is not in it. ``Api`` serves a lane in front of the middleware
while the app's middleware is only what the lane does itself (the trace, the error handlers);
otherwise (OpenTelemetry, any other middleware) the lane is the router's first route.
tests/integration/test_fast_lane.py holds the lane to the route's answers, byte for byte.
"""

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request
from starlette.middleware.errors import ServerErrorMiddleware
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.requests import ClientDisconnect
from starlette.responses import Response
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from services.edge.bodies import MAX_BATCH_BYTES, MAX_BODY_BYTES, bounded_receive
from services.edge.door_audit import RefusalAudit
from services.observing.tracing import TraceContext, current_traceparent, valid_traceparent

LANE_HEADERS = "feedbackloop.lane_headers"  # what FastLane.matches read, for its handler
LANE_ERROR = "feedbackloop.lane_error"  # what a lane served in front raised, for the handlers

# A lane's endpoint: the body, the API key and the Idempotency-Key in; the status and the
# JSON of the answer out. What it raises is answered by the app's error handlers.
LaneEndpoint = Callable[[bytes, str, str | None], Awaitable[tuple[int, bytes]]]


class FastLane(Route):
    """A lane for one FastAPI route's commonest request (see the module's docstring)."""

    def __init__(self, path: str, endpoint: LaneEndpoint) -> None:
        if "{" in path:
            raise ValueError("a lane's path is plain: it is compared whole, without parameters")
        self.answer = endpoint

        async def handle(request: Request) -> Response:
            key, idempotency_key, _ = request.scope[LANE_HEADERS]  # read once, by matches()
            status, answer = await self.answer(await request.body(), key, idempotency_key)
            return Response(answer, status_code=status, media_type="application/json")

        super().__init__(path, handle, methods=["POST"], include_in_schema=False)

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http" or scope.get("query_string"):
            return Match.NONE, {}
        if scope["method"] != "POST":
            return Match.NONE, {}
        headers = _plain_headers(scope)
        if headers[0] is None:
            return Match.NONE, {}
        match, child = super().matches(scope)
        return match, {**child, LANE_HEADERS: headers}

    async def serve(self, app: "Api", scope: Scope, receive: Receive, send: Send) -> bool:
        """Answer a request for this lane's path straight from the server, as the route
        behind the middleware would (``Api.__call__``); False, having read nothing, if it is
        one for the route. The middleware's work for it is done here: ``TraceContext``'s
        (the trace for the bus) and the error handlers' (``Api.answer_failure``)."""
        key, idempotency_key, traceparent = _plain_headers(scope)
        if key is None:
            return False
        scope["app"] = app  # as Starlette sets it for every request
        token = current_traceparent.set(traceparent)
        try:
            try:
                status, answer = await self.answer(await _body_of(receive), key, idempotency_key)
            except Exception as error:
                await app.answer_failure(scope, receive, send, error)
                return True
            # What ``Response(answer, status, media_type="application/json")`` sends.
            length = str(len(answer)).encode("latin-1")
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [
                        (b"content-length", length),
                        (b"content-type", b"application/json"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": answer})
        finally:
            current_traceparent.reset(token)
        return True


async def _body_of(receive: Receive) -> bytes:
    """The request's body, whole (Starlette's ``Request.body``, without the Request); one
    longer than ``MAX_BODY_BYTES`` is refused as it arrives, never held whole in memory."""
    receive = bounded_receive(receive, MAX_BODY_BYTES)
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.request":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                return b"".join(chunks)
        elif message["type"] == "http.disconnect":
            raise ClientDisconnect()


def _plain_headers(scope: Scope) -> tuple[str | None, str | None, str | None]:
    """The API key, Idempotency-Key and valid ``traceparent`` (the first, as
    ``TraceContext`` reads it) of a request the lane takes; the key is None if it is one
    for the route (no bearer key, or an Idempotency-Key repeated, empty or long)."""
    key = idempotency_key = traceparent = None
    keys = traced = 0
    for name, value in scope["headers"]:
        if name == b"authorization":
            if key is not None:
                return None, None, None
            scheme, _, credentials = value.decode("latin-1").partition(" ")
            key = credentials.strip()  # as HTTPBearer reads it
            if scheme.lower() != "bearer" or not key:
                return None, None, None
        elif name == b"idempotency-key":
            keys += 1
            idempotency_key = value.decode("latin-1")
            if keys > 1 or not 0 < len(idempotency_key) <= 200:
                return None, None, None
        elif name == b"traceparent" and not traced:
            traced = 1
            traceparent = valid_traceparent(value.decode("latin-1"))
    return key, idempotency_key, traceparent


async def _raise_lane_error(scope: Scope, receive: Receive, send: Send) -> None:
    raise scope.pop(LANE_ERROR)


class Api(FastAPI):
    """The app: FastAPI, whose fast lanes (``FastLane``) are served before its middleware.

    Behind the middleware a lane's request passes seven layers (FastAPI's error and
    body-limit ones, ``TraceContext``, the exception handlers, the router, Starlette's
    request wrapper), each wrapping ``send`` again. Served in front, the lane does what those
    layers did for it: the trace, and any failure answered by the same handlers, in the same
    order (``answer_failure``). Only while the app's middleware is no more than that: with
    any other middleware (tracing by OpenTelemetry) the lanes stay in the router, behind it.
    Every request's body is bounded by the largest any route reads (``MAX_BATCH_BYTES``)."""

    _in_front: dict[str, FastLane] | None = None
    _failure: ASGIApp | None = None
    # Around every request, lanes included: a refusal the door decides is audited (D110).
    refusals: RefusalAudit | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.refusals is not None:
            await self.refusals.around(scope, receive, send, self._answer)
        else:
            await self._answer(scope, receive, send)

    async def _answer(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            in_front = self._in_front
            if in_front is None:  # the first request: the middleware is settled now
                if self.middleware_stack is None:
                    self.middleware_stack = self.build_middleware_stack()  # as Starlette does
                in_front = self._in_front = self._lanes_in_front()
            lane = in_front.get(scope["path"])
            if (
                lane is not None
                and not scope.get("query_string")
                and not scope.get("root_path")
                and await lane.serve(self, scope, receive, send)
            ):
                return
        if scope["type"] == "http":
            receive = bounded_receive(receive, MAX_BATCH_BYTES)
        await super().__call__(scope, receive, send)

    def _lanes_in_front(self) -> dict[str, FastLane]:
        """The lanes by path, if the app's middleware is only what a lane does itself."""
        middleware: list[object] = [m.cls for m in self.user_middleware]
        # A middleware that never touches an API path (``passes_lanes``, the console's
        # headers) leaves a lane's work unchanged.
        mine = all(cls is TraceContext or getattr(cls, "passes_lanes", False) for cls in middleware)
        instrumented = getattr(self, "_is_instrumented_by_opentelemetry", False)
        if not mine or instrumented or self.root_path:
            return {}
        return {r.path: r for r in self.router.routes if isinstance(r, FastLane)}

    async def answer_failure(
        self, scope: Scope, receive: Receive, send: Send, error: Exception
    ) -> None:
        """Answer what a lane raised as the middleware would: the app's exception handlers
        (Starlette's ``ExceptionMiddleware``), else its handler of any failure, which answers
        500 and raises the error again for the server to log (``ServerErrorMiddleware``), as
        ``FastAPI.build_middleware_stack`` sets them up."""
        if self._failure is None:
            handlers: dict[Any, Any] = {}
            on_failure = None
            for key, handler in self.exception_handlers.items():
                if key in (500, Exception):
                    on_failure = handler
                else:
                    handlers[key] = handler
            handled = ExceptionMiddleware(_raise_lane_error, handlers=handlers, debug=self.debug)
            self._failure = ServerErrorMiddleware(handled, handler=on_failure, debug=self.debug)
        scope[LANE_ERROR] = error
        await self._failure(scope, receive, send)
