"""The HTTP app of a process: every context's routes, the event door, tracing and ``/readyz``."""

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse

from services.declaration import Given
from services.edge.app import create_app
from services.edge.http import Http
from services.edge.widget_cors import WidgetCors
from services.followers.transient import postgresql_away
from services.kafka.inbound.http import event_routes
from services.observing.otel import configure as configure_telemetry
from services.observing.tracing import TraceContext
from services.processes.contexts import CONTEXTS, SUBSCRIPTIONS

log = logging.getLogger("feedbackloop")


def http_app(
    http: Http,
    given: Given,
    readiness: Callable[[], Awaitable[dict[str, Any]]],
    lifespan: Any = None,
) -> tuple[FastAPI, Callable[[], None] | None]:
    """The app, and what stops its telemetry (None when off)."""
    routers = [context.routes(http, given) for context in CONTEXTS if context.routes]
    routers.append(event_routes(http, SUBSCRIPTIONS))
    app = create_app(http, routers, lifespan=lifespan)
    app.add_middleware(TraceContext)
    # D234: CORS for the widget's route alone, to the origins configured for it.
    origins = [origin for listed in given.settings.widget_origins.values() for origin in listed]
    app.add_middleware(WidgetCors, origins=origins)
    untrace = configure_telemetry(app)  # only with OTEL_EXPORTER_OTLP_ENDPOINT set

    @app.get("/readyz", include_in_schema=False)
    async def readyz() -> JSONResponse:
        """Ready means "can serve" (``/healthz`` stays liveness): 503 only without the
        database or with a reader this process runs that is dead, waiting or lagging.
        Parked events anywhere in the instance make it *degraded* — 200, with ``degraded``
        and the reasons per reader in the body (services/processes/health.py)."""
        try:
            report = await readiness()
        except Exception as error:
            if not postgresql_away(error):
                raise
            # The driver's message may name the database's host: the unauthenticated body
            # says only the kind of error, the log the whole of it.
            log.warning("readyz: PostgreSQL unreachable: %s: %s", type(error).__name__, error)
            problem = f"unreachable: {type(error).__name__}"
            body = {"status": "not ready", "database": problem}
            return JSONResponse(body, status_code=503)
        return JSONResponse(report, status_code=200 if report["status"] == "ok" else 503)

    return app, untrace
