"""The HTTP API (FastAPI): the app, bearer keys and scopes, and errors as machine-readable
bodies ``{"error": <code>, "message": …, "field": …}``. Each context adds its own routes.
"""

import hashlib
import json
import re
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any, TypeVar

import orjson
from fastapi import APIRouter, Depends, FastAPI, Header, Path, Query, Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import AfterValidator, BaseModel, BeforeValidator
from starlette.middleware.errors import ServerErrorMiddleware
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.requests import ClientDisconnect
from starlette.responses import Response
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from contracts.errors import DomainError, Refused
from contracts.scalars import within_utc_years
from services.bus.command_bus import CommandBus, Issued, Outcome, Result, command_from
from services.edge.auth import KeyRing, Principal
from services.edge.openapi import with_bodies
from services.edge.positions import PositionSeal
from services.edge.problems import (
    STATUS,
    Forbidden,
    NotYetVisible,
    TooLarge,
    Unauthorized,
    UnsupportedMediaType,
    install_error_handlers,
)
from services.followers.waiting import wait_for_position
from services.observing.tracing import TraceContext, current_traceparent, valid_traceparent
from services.store.event_store import EVENTS_TABLE

# ``?minPosition=`` on reads: wait until the caller's own write is visible. The value is the
# opaque ``position`` a write answered (services/edge/positions.py), never a number.
MinPosition = Annotated[
    str | None,
    Query(
        alias="minPosition",
        min_length=1,
        max_length=200,
        description="The `position` a write answered: wait until that write is visible",
    ),
]
# An id in a path that names what a neighbour's event named (a run, an agent, an artifact):
# no longer than a reference may be (``contracts.scalars.Ref``), so nothing longer is looked
# up, nor sent back in the answer.
PathRef = Annotated[str, Path(min_length=1, max_length=512)]
# An instant in a query: an RFC 3339 date-time with its offset, as the schema's format says.
# Read laxly, a number was a Unix timestamp and a bare date midnight somewhere.
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


def rfc3339(value: object) -> object:
    if not (isinstance(value, str) and _RFC3339.fullmatch(value)):
        raise ValueError("expected an RFC 3339 date-time with its offset: 2026-11-30T08:00:00Z")
    return value


# Within years 1 to 9999 in UTC, as every instant a door takes (``contracts.scalars``).
Instant = Annotated[datetime, BeforeValidator(rfc3339), AfterValidator(within_utc_years)]
# ``?before=`` on lists: the ``next`` of the previous page, a token like a position. Long
# enough for a sealed sort key as long as a dataset id (``agent:`` and a 512-character id).
Before = Annotated[
    str | None,
    Query(min_length=1, max_length=1024, description="Cursor: the `next` of the previous page"),
]
# ``?limit=`` on lists: a page's length; the same bounds on every list.
Limit = Annotated[int, Query(ge=1, le=200, description="At most this many items (1–200)")]
PAGE = 50  # a page's length when ``limit`` is not given


# ``Idempotency-Key``: a retry with the same key is the same command (SPEC C11). An empty key
# is refused rather than read as "no key": the client meant to send one.
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=200,
        description="The same key and body answer the first result (200); another body 409.",
    ),
]


def command_id(idempotency_key: str | None) -> str:
    """The command's id: from the client's Idempotency-Key, so a retry is the same command."""
    return f"key/{idempotency_key}" if idempotency_key else str(uuid.uuid4())


MAX_BODY_BYTES = 64 * 1024
# A batch (``POST /factory/feedback:batch``): a thousand items of the largest a RecordFeedback
# can be, with room for escapes.
MAX_BATCH_BYTES = 4 * 1024 * 1024
# Deeper than any of our contracts nests (a few levels), far below the parser's recursion
# limit: a body nested a thousand deep is refused before it is parsed.
MAX_DEPTH = 32
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_JSON_STRING_OR_KEY = re.compile(rb'"(?:[^"\\]|\\.)*"(\s*:)?', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


# Declared as the OpenAPI security scheme; a missing or malformed header is our 401, not
# FastAPI's 403.
BEARER = HTTPBearer(auto_error=False, description="An API key: `feedbackloop keys new`.")


@dataclass
class Http:
    """What routes need: the command path, the read side, the keys and the clock."""

    bus: CommandBus
    pool: Any
    keys: KeyRing
    read_wait_seconds: float
    positions: PositionSeal
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    lanes: list["FastLane"] = field(default_factory=list)  # create_app routes them first

    def scope(self, required: str) -> Callable[..., Awaitable[Principal]]:
        """A dependency: the caller's principal, if its key holds ``required``."""

        async def check(
            credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)],
        ) -> Principal:
            key = None if credentials is None else credentials.credentials
            return self.authorize(key, required)

        return check

    def authorize(self, key: str | None, required: str | None) -> Principal:
        """The principal of an API key, if the key is known and holds ``required`` (None: any
        known key, where the scope needed is known only once the body is read)."""
        principal = None if key is None else self.keys.identify(key)
        if principal is None:
            raise Unauthorized()
        if required is not None and required not in principal.scopes:
            raise Forbidden(required)
        return principal

    async def execute(
        self, command: BaseModel, principal: Principal, command_id: str, key: str | None = None
    ) -> Outcome:
        """Decide and append ``command``. With ``key`` (an Idempotency-Key on a route whose
        command has no id of its own to repeat by), the command is applied once under it: a
        repeat with the same request answers what it shows now, another request a 409."""
        identity = digest = None
        if key is not None:
            identity = f"http/{principal.tenant_id}/{principal.subject}/{key}"
            said = f"{type(command).__name__}:{command.model_dump_json()}"
            digest = hashlib.sha256(said.encode()).hexdigest()
        issued = Issued(
            command,
            principal.tenant_id,
            principal.subject,
            command_id,
            self.clock(),
            identity=identity,
            service=principal.service,
            digest=digest,
        )
        return await self.bus.execute(issued)

    async def execute_all(
        self, commands: list[tuple[BaseModel, str]], principal: Principal
    ) -> list[Result]:
        """Decide ``(command, command id)`` pairs together and append their events in one
        transaction (the bus's batch); answers each one's Outcome or error, in order."""
        at = self.clock()
        issued = [
            Issued(
                command,
                principal.tenant_id,
                principal.subject,
                command_id,
                at,
                service=principal.service,
            )
            for command, command_id in commands
        ]
        return await self.bus.execute_batch(issued, None)

    def position(self, outcome: Outcome, principal: Principal) -> str:
        """The ``position`` a write answers: its place in the log, sealed for its tenant."""
        return self.positions.seal(outcome.position, principal.tenant_id)

    def sealed(self, position: int | None, principal: Principal) -> str | None:
        """A read model's position as the API shows it (the order of a list, a cursor)."""
        if position is None:
            return None
        return self.positions.seal(position, principal.tenant_id)

    def cursor(self, before: str | None, principal: Principal) -> int | None:
        """``?before=``: the position in a cursor this tenant was given."""
        if before is None:
            return None
        return self.positions.open(before, principal.tenant_id, field="before")

    def sealed_key(self, listed: str, key: str | None, principal: Principal) -> str | None:
        """The ``next`` of a list ordered by something else than position (a date, a name):
        the last item's sort key, named for its list and sealed as positions are."""
        if key is None:
            return None
        return self.positions.seal_text(f"{listed}/{key}", principal.tenant_id)

    def opened_key(self, listed: str, before: str | None, principal: Principal) -> str | None:
        """``?before=`` of such a list: the sort key in a cursor this tenant was given for
        this list (one of another list is refused as a cursor of another tenant is)."""
        if before is None:
            return None
        text = self.positions.open_text(before, principal.tenant_id, field="before")
        name, _, key = text.partition("/")
        if name != listed:
            raise Refused("before is not a cursor of this list", field="before")
        return key

    def with_position(self, item: dict[str, Any], principal: Principal) -> dict[str, Any]:
        return {**item, "position": self.sealed(item["position"], principal)}

    async def read_at(
        self, read_model: str, min_position: str | None, principal: Principal
    ) -> None:
        """Read-your-writes: wait until the read model has applied ``min_position``.

        A position past the log's head cannot be waited into existence: refused at once
        instead of holding the request for the whole wait."""
        if min_position is None:
            return
        wanted = self.positions.open(min_position, principal.tenant_id)
        head = await self.pool.fetchval(f"SELECT max(notification_id) FROM {EVENTS_TABLE}")
        if wanted > (head or 0):
            raise Refused("minPosition is past every write so far", field="minPosition")
        schema = f"rm_{read_model}"
        reached = await wait_for_position(self.pool, schema, wanted, self.read_wait_seconds)
        if reached < wanted:
            raise NotYetVisible(read_model)


T = TypeVar("T", bound=BaseModel)


def nesting_depth(raw: bytes) -> int:
    """How deeply arrays and objects nest in a JSON text, brackets inside strings aside."""
    brackets = _JSON_STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    depth = deepest = 0
    for byte in brackets:
        depth += 1 if byte in b"[{" else -1
        deepest = max(deepest, depth)
    return deepest


def parse_json(raw: bytes) -> Any:
    """A request body as JSON, read the way our contracts publish it: nesting bounded, no
    duplicate keys (which one would win is the parser's accident), no NaN or Infinity (not
    JSON)."""
    return read_body(raw)[0]


def read_body(raw: bytes) -> tuple[Any, bool]:
    """``parse_json``'s reading, and whether orjson read it (then its values are ones orjson
    writes back as they were read: finite numbers, ints within 64 bits, no lone surrogates).

    orjson reads a body in a fraction of the standard parser's time (issue 12) but keeps the
    last of two equal keys and says little of what is wrong: a body it refuses, or in which
    it found fewer keys than the text spells, is read again by the standard parser, whose
    refusal names the duplicate key or the error's place. A body orjson read is measured on
    what it read (its nesting, its keys), not by scanning the text again; every other body
    has its nesting bounded on the text before the standard parser (a recursive one) sees
    it. So every rule holds as before, refused in the same order and words."""
    try:
        data = orjson.loads(raw or b"null")
    except orjson.JSONDecodeError:  # orjson's own nesting limit (1,024) lands here too
        return _parse_strictly(raw), False
    try:
        keys = _keys_within(data, MAX_DEPTH)
    except _TooDeep:
        raise _too_deep() from None
    # Each key read was spelt, and each key spelt is followed by a colon, which only a key
    # (outside strings) is: when the text has no more colons than keys were read, no key
    # was spelt twice. Colons inside strings (times, URLs) call for the exact count.
    if keys != raw.count(b":") and keys != _keys_spelt(raw):
        return _parse_strictly(raw), False
    return data, True


class _TooDeep(Exception):
    pass


def _too_deep() -> Refused:
    return Refused(f"the body nests deeper than {MAX_DEPTH} levels", field="body")


def _keys_within(value: Any, levels: int) -> int:
    """How many object keys ``value`` holds at every level; ``_TooDeep`` if its arrays and
    objects nest more than ``levels`` deep (what ``nesting_depth`` counts on the text)."""
    if isinstance(value, dict):
        if not levels:
            raise _TooDeep
        keys = len(value)
        for each in value.values():
            if isinstance(each, dict | list):
                keys += _keys_within(each, levels - 1)
        return keys
    if isinstance(value, list):
        if not levels:
            raise _TooDeep
        keys = 0
        for each in value:
            if isinstance(each, dict | list):
                keys += _keys_within(each, levels - 1)
        return keys
    return 0


def _parse_strictly(raw: bytes) -> Any:
    if nesting_depth(raw) > MAX_DEPTH:
        raise _too_deep()
    try:
        return json.loads(raw or b"null", object_pairs_hook=_unique_keys, parse_constant=_not_json)
    except ValueError as exc:
        raise Refused(f"the body is not JSON: {exc}", field="body") from None


def _keys_spelt(raw: bytes) -> int:
    """How many object keys a (valid) JSON text spells: strings followed by a colon. Each
    match consumes a whole string, so a quote or colon inside one is never miscounted."""
    colons = _JSON_STRING_OR_KEY.findall(raw)  # per string: b":" after a key, else b""
    return len(colons) - colons.count(b"")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise Refused(f"the key {key!r} appears more than once", field=key)
        found[key] = value
    return found


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


async def refuse_nul(request: Request) -> None:
    """PostgreSQL text cannot hold NUL: a query parameter or path segment with one is refused,
    naming it, instead of failing in a query (a dependency of every route)."""
    for name, value in [*request.query_params.multi_items(), *request.path_params.items()]:
        if "\x00" in name or "\x00" in str(value):
            raise Refused(f"{name!r} must not contain NUL characters", field=name)


def query_names(dependant: Dependant) -> frozenset[str]:
    """The query parameters a route (and each of its dependencies) declares."""
    names = {param.alias for param in dependant.query_params}
    for dependency in dependant.dependencies:
        names |= query_names(dependency)
    return frozenset(names)


async def check_query(request: Request) -> None:
    """Strict with ourselves (STYLE 12): a query parameter the route does not declare is
    refused, naming it — a misspelt filter would otherwise answer everything unfiltered — and
    so is one given twice (which one counts would be the framework's accident)."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    known = query_names(route.dependant)
    seen: set[str] = set()
    for name, _ in request.query_params.multi_items():
        if name not in known:
            raise Refused(f"this route has no query parameter {name!r}", field=name)
        if name in seen:
            raise Refused(f"the query parameter {name!r} is given more than once", field=name)
        seen.add(name)


# Headers a request gives once: which of two keys or Idempotency-Keys counts would otherwise
# be the framework's accident (the first), as with a query parameter given twice.
ONCE = {b"authorization": "Authorization", b"idempotency-key": "Idempotency-Key"}


async def check_request(request: Request) -> None:
    """The checks every route makes of its headers, query and path (a dependency of the
    app). Most writes have no query string: its parse is skipped then (issue 12)."""
    seen: set[bytes] = set()
    for name, _ in request.scope["headers"]:
        if name in ONCE:
            if name in seen:
                raise Refused(f"the header {ONCE[name]} is given more than once", field=ONCE[name])
            seen.add(name)
    if request.scope.get("query_string"):
        await refuse_nul(request)
        await check_query(request)
        return
    for name, value in request.path_params.items():
        if "\x00" in str(value):
            raise Refused(f"{name!r} must not contain NUL characters", field=name)


# A media type as RFC 9110 spells it, ``type/subtype`` of token characters, parameters aside.
_MEDIA_TYPE = re.compile(r"[!#$%&'*+.^_`|~0-9a-z-]+/[!#$%&'*+.^_`|~0-9a-z-]+")


def media_type(request: Request, accepted: tuple[str, ...] | None = None) -> str:
    """The body's media type (lower case, parameters aside) if it is one of ``accepted`` (any
    well-formed one when None); else 415, naming the types the route takes. A missing
    Content-Type is refused too where ``accepted`` names types: the client said nothing of
    what it sent."""
    given = request.headers.get("content-type", "")
    essence = given.split(";")[0].strip().lower()
    if not _MEDIA_TYPE.fullmatch(essence) or (accepted is not None and essence not in accepted):
        raise UnsupportedMediaType(given, accepted or ("a media type (type/subtype)",))
    return essence


async def no_body(request: Request) -> None:
    """A route that takes no body refuses one instead of ignoring what the client meant."""
    if await request.body():
        raise Refused("this route takes no body", field="body")


async def read_json(request: Request, limit: int = MAX_BODY_BYTES) -> Any:
    """The request body as JSON, at most ``limit`` bytes, read by ``parse_json``'s rules."""
    return bounded_body(await request.body(), limit)[0]


def bounded_body(raw: bytes, limit: int = MAX_BODY_BYTES) -> tuple[Any, bool]:
    """``read_body`` of a body of at most ``limit`` bytes; a longer one is refused."""
    if len(raw) > limit:
        raise TooLarge(limit)
    return read_body(raw)


def problem_of(error: DomainError) -> dict[str, Any]:
    """A refused item of a batch: the one error shape (services/edge/problems.py) with its
    status."""
    details = error.details
    problem = {
        "status": STATUS.get(type(error), 400),
        "error": error.code,
        "message": error.message,
        "field": details.get("field"),
        "problems": details.get("problems", []),
        "feedbackId": details.get("feedbackId"),  # a conflict names what the key was used for
    }
    return problem


async def read_command(request: Request, model: type[T], stamped: frozenset[str]) -> T:
    """A command from the request body; stamped fields are refused by name."""
    return command_of(await request.body(), model, stamped)


def command_of(raw: bytes, model: type[T], stamped: frozenset[str]) -> T:
    """A command from a request body (``read_command``'s reading, of the bytes)."""
    data, by_orjson = bounded_body(raw)
    # Strict with ourselves (STYLE 12): JSON types as the schema publishes them, nothing
    # coerced ("3", 4.0 or true for an integer, 0 for a boolean are refused). The strict
    # reading is of JSON text: what orjson read it writes back as it was (in a fifth of
    # json.dumps' time); what only the standard parser took (an infinity from 1e400, which
    # orjson would write as null) is written by json.dumps, as before.
    as_json = orjson.dumps if by_orjson else json.dumps
    command = command_from(data, model, stamped, strict=True, as_json=as_json)
    assert isinstance(command, model)
    return command


LANE_HEADERS = "feedbackloop.lane_headers"  # what FastLane.matches read, for its handler
LANE_ERROR = "feedbackloop.lane_error"  # what a lane served in front raised, for the handlers

# A lane's endpoint: the body, the API key and the Idempotency-Key in; the status and the
# JSON of the answer out. What it raises is answered by the app's error handlers.
LaneEndpoint = Callable[[bytes, str, str | None], Awaitable[tuple[int, bytes]]]


class FastLane(Route):
    """A lane for one FastAPI route's commonest request only (issue 12): a POST with no query
    string, a well-formed ``Authorization: Bearer`` header and at most one ``Idempotency-Key``
    of 1–200 characters. Such a request is handled by ``endpoint`` — the same code the route
    runs, given the body, the key and the Idempotency-Key — without FastAPI's dependency
    solving, which cost a third of the request's CPU time. Every other request (a query
    string, no or an odd header) is the route's, so each refusal the route makes before its
    body is read stays the route's own; what the endpoint raises is answered by the app's
    error handlers, as the route's errors are. The route stays the declaration in
    ``/openapi.json``; the lane is not in it.

    ``Api`` serves a lane in front of the middleware (``serve``); when it cannot (other
    middleware, OpenTelemetry), the lane is the router's first route, as here."""

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


def _bounded(receive: Receive, limit: int) -> Receive:
    """``receive``, refusing (413) a request body once it passes ``limit``, the most any route
    reads: a route reads its body whole before its own bound, and a body of hundreds of
    megabytes was held in memory before it was refused (found by attacking the API)."""
    size = 0

    async def receive_bounded() -> Message:
        nonlocal size
        message = await receive()
        if message["type"] == "http.request":
            size += len(message.get("body", b""))
            if size > limit:
                raise TooLarge(limit)
        return message

    return receive_bounded


async def _body_of(receive: Receive) -> bytes:
    """The request's body, whole (Starlette's ``Request.body``, without the Request); one
    longer than ``MAX_BODY_BYTES`` is refused as it arrives, never held whole in memory."""
    receive = _bounded(receive, MAX_BODY_BYTES)
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

    A lane's request went through seven layers of middleware (FastAPI's error and body-limit
    ones, ``TraceContext``, the exception handlers, the router, Starlette's request wrapper),
    each wrapping ``send`` again: a third of the request path's samples in a worker, about
    8 % of the API's CPU time a command (issue 12). Served in front, the lane does what
    those layers did for it: the trace, and any failure answered by the same handlers, in
    the same order (``answer_failure``). Only while the app's middleware is no more than
    that: with any other middleware (tracing by OpenTelemetry) the lanes stay in the
    router, behind it."""

    _in_front: dict[str, FastLane] | None = None
    _failure: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
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
            receive = _bounded(receive, MAX_BATCH_BYTES)
        await super().__call__(scope, receive, send)

    def _lanes_in_front(self) -> dict[str, FastLane]:
        """The lanes by path, if the app's middleware is only what a lane does itself."""
        middleware: list[object] = [m.cls for m in self.user_middleware]
        mine = all(cls is TraceContext for cls in middleware)
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


def create_app(http: Http, routers: list[APIRouter], *, lifespan: Any = None) -> Api:
    app = Api(
        title="Feedback Loop",
        summary="Feedback on AI agents' answers, recorded as events and published on Kafka.",
        lifespan=lifespan,
        # Traces come from opentelemetry-instrumentation-fastapi when configured
        # (services/observing/otel.py); FastAPI's own would trace twice, and asks the environment
        # whether to on every request (issue 12: 4 % of a request's CPU time).
        telemetry={"tracing": False, "metrics": False, "logs": False},
        # One dependency for both checks: each dependency costs FastAPI a solve per request.
        dependencies=[Depends(check_request)],
        # A path with a trailing slash is not a route: 404 in the error shape, not a 307 with
        # an empty body (found by attacking the API).
        redirect_slashes=False,
    )
    for router in routers:
        app.include_router(router)
    app.router.routes[:0] = http.lanes

    install_error_handlers(app)
    app.openapi = with_bodies(app)  # type: ignore[method-assign]

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        await http.pool.fetchval("SELECT 1")
        return {"status": "ok"}

    return app
