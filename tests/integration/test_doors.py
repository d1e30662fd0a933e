"""The HTTP doors, enumerated from the app as served (SPEC C52; decisions D110, D114): every
request passes the app's refusal audit, every API route is one the role tables hold to its
rule, and every console page declares its readers; a page a role may not read is refused
403 and the refusal is one row of the audit at the console's door. The other doors (CLI,
gRPC, Kafka, scheduled orders): tests/unit/test_doors.py."""

from collections.abc import Iterable, Iterator
from typing import Any

import httpx
from fastapi.routing import APIRoute

from contracts.roles import ROLES
from services.console.pages import PAGES
from services.edge.door_audit import RefusalAudit, door_of
from services.permissions.doors import CONSOLE, HTTP
from services.processes.bootstrap import Runtime
from tests.integration.test_console_sessions import signed_in
from tests.integration.test_role_rules import (
    ALLOWED,
    RoleKeys,
    keys,  # noqa: F401  (the fixture)
    refusals_of,
    write_routes,
)

# The console's routes that are no page: signing in (with a key, or by OIDC under /sign-in/)
# and out, and the redirect to the first page a visitor's roles show.
NO_PAGE = {"/", "/sign-in", "/sign-out"}
# Public files any page may load: they read nothing of a tenant (the widget, decisions D236).
STATIC = {"/widget/feedback.js"}


def every_route(routes: Iterable[Any]) -> Iterator[Any]:
    """The app's routes, those of the routers it includes too (FastAPI keeps an included
    router whole, under ``original_router``)."""
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is not None:
            yield from every_route(included.routes)
        else:
            yield route


async def test_every_request_of_the_app_passes_the_refusal_audit(runtime: Runtime) -> None:
    app = runtime.app()
    assert isinstance(app.refusals, RefusalAudit)
    document = app.openapi()
    # Each write route has its row in the role table, each read the READ_ALL rule or its own
    # (tests/integration/test_role_reads.py): no route is outside the tables.
    assert write_routes(document) == set(ALLOWED)
    for route in every_route(app.router.routes):
        path = getattr(route, "path", "")
        if path.startswith("/factory"):
            assert door_of(path) == HTTP.name
        elif isinstance(route, APIRoute) and not route.include_in_schema:
            assert door_of(path) == CONSOLE.name


async def test_every_console_route_is_a_page_with_its_readers_or_signing_in(
    runtime: Runtime,
) -> None:
    app = runtime.app()
    console_paths = {
        route.path
        for route in every_route(app.router.routes)
        if isinstance(route, APIRoute)
        and not route.include_in_schema
        and not route.path.startswith(("/factory", "/healthz", "/readyz", "/metrics"))
    }
    assert "/audit.csv" in console_paths
    for path in console_paths:
        pages = [
            p for p in PAGES if path == p.path or path.startswith((p.path + "/", p.path + "."))
        ]
        assert pages or path in NO_PAGE | STATIC or path.startswith("/sign-in/"), path
    for page in PAGES:
        assert set(page.roles) <= set(ROLES), page.name


async def test_a_console_page_a_role_may_not_read_is_refused_and_audited(
    runtime: Runtime,
    keys: RoleKeys,  # noqa: F811
) -> None:
    """Decisions D110: a page refused (403) is one row at the console's door, naming the
    page, never a value of its path."""
    role = "Requester"
    transport = httpx.ASGITransport(app=runtime.app(), raise_app_exceptions=False)
    refused = [p for p in PAGES if p.roles and role not in p.roles]
    assert refused
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as browser:
        assert (await signed_in(browser, keys.by_role[role])).status_code == 303
        for page in refused:
            answer = await browser.get(page.path)
            assert answer.status_code == 403, (page.path, answer.status_code)
    audited = await refusals_of(runtime, "requester-1")
    assert audited == [(f"GET {p.path}", "not-permitted", CONSOLE.name) for p in refused]
