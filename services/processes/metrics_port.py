"""The metrics port: ``/metrics`` served apart from the API, on the port of the process's role
(``services/processes/roles.py``) unless ``FEEDBACKLOOP_METRICS_PORT`` says another (0: none).
Served before the process connects to PostgreSQL, so that a wait for it shows there."""

import contextlib
import logging
from collections.abc import Callable

from prometheus_client import start_http_server

from services.processes.roles import Role
from services.processes.settings import Settings

log = logging.getLogger("feedbackloop")


def metrics_port(settings: Settings, role: Role) -> int:
    """``FEEDBACKLOOP_METRICS_PORT`` when set, else the role's own (services/processes/roles.py)."""
    return role.metrics_port if settings.metrics_port is None else settings.metrics_port


Served = tuple[int, Callable[[], None]]  # the port metrics are served on, and how to stop


def serve_metrics(settings: Settings, role: Role, workers: int = 1) -> Served | None:
    """Serve ``/metrics`` apart from the API on the role's metrics port
    (services/processes/roles.py);
    answers the port and how to stop, or None when the port is 0. With several API workers,
    each counts its own requests: worker k of n serves on the first free port of the role's
    port … +n-1. Served before the process connects, so that a wait for PostgreSQL shows
    there (``Runtime.metrics_served`` then keeps the read-model gauges refreshed)."""
    first = metrics_port(settings, role)
    if not first:
        log.info("metrics: off (FEEDBACKLOOP_METRICS_PORT=0)")
        return None
    if workers == 1:
        return metrics_server(settings, first)
    for port in range(first, first + workers):
        with contextlib.suppress(RuntimeError):
            return metrics_server(settings, port)
    raise RuntimeError(f"metrics: no free port in {first}…{first + workers - 1}")


def metrics_server(settings: Settings, port: int) -> Served:
    """``/metrics`` on ``port``. A port that is taken stops the process: metrics an operator
    counts on must not go missing quietly."""
    host = settings.metrics_host
    try:
        server, _thread = start_http_server(port, host)
    except OSError as exc:
        raise RuntimeError(
            f"metrics: cannot serve on {host}:{port} ({exc}); set FEEDBACKLOOP_METRICS_PORT "
            "to a free port, or 0 for none"
        ) from None

    def stop() -> None:
        server.shutdown()
        server.server_close()

    log.info("metrics: http://%s:%d/metrics", host, server.server_port)
    return int(server.server_port), stop
