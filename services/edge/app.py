"""The HTTP API (FastAPI): ``create_app`` assembles the contexts' routers, their fast lanes,
the checks every request goes through and the error handlers. What a route needs of the
runtime is ``services.edge.http.Http``."""

from typing import Any

from fastapi import APIRouter, Depends

from services.edge.access_log import redact_person_paths
from services.edge.checks import check_request
from services.edge.door_audit import RefusalAudit
from services.edge.error_handlers import install_error_handlers
from services.edge.fast_lane import Api
from services.edge.http import Http
from services.edge.openapi import with_bodies


def create_app(http: Http, routers: list[APIRouter], *, lifespan: Any = None) -> Api:
    app = Api(
        title="Feedback Loop",
        summary="Feedback on AI agents' answers, recorded as events and published on Kafka.",
        lifespan=lifespan,
        # Traces come from opentelemetry-instrumentation-fastapi when configured
        # (services/observing/otel.py); FastAPI's own would trace twice, and asks the
        # environment whether to on every request.
        telemetry={"tracing": False, "metrics": False, "logs": False},
        # One dependency for every check: each dependency costs FastAPI a solve per request.
        dependencies=[Depends(check_request)],
        # A path with a trailing slash is not a route: 404 in the error shape, not a 307 with
        # an empty body.
        redirect_slashes=False,
    )
    for router in routers:
        app.include_router(router)
    app.router.routes[:0] = http.lanes

    audit = getattr(http.bus, "audit", None)  # none where only the document is built
    if audit is not None:
        app.refusals = RefusalAudit(audit, http.clock)
    install_error_handlers(app)
    app.openapi = with_bodies(app)  # type: ignore[method-assign]
    redact_person_paths(lambda: app.openapi()["paths"])  # the access log names no person (D134)

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        await http.pool.fetchval("SELECT 1")
        return {"status": "ok"}

    return app
