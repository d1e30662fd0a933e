"""The checks every route makes of a request's headers, query and path (one dependency of the
app, ``check_request``: each dependency costs FastAPI a solve per request)."""

from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from contracts.errors import Refused

# Headers a request gives once: which of two keys or Idempotency-Keys counts would otherwise
# be the framework's accident (the first), as with a query parameter given twice.
ONCE = {b"authorization": "Authorization", b"idempotency-key": "Idempotency-Key"}


async def check_request(request: Request) -> None:
    """Headers given once, no NUL in the query or path, no query parameter the route does
    not declare. Most writes have no query string: its parse is skipped then."""
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


async def refuse_nul(request: Request) -> None:
    """PostgreSQL text cannot hold NUL: a query parameter or path segment with one is refused,
    naming it, instead of failing in a query."""
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
