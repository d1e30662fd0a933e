"""The commands that serve HTTP: ``serve`` (everything in one process) and ``api`` (the API
alone, a worker process per core)."""

import asyncio
import contextlib
import os
import signal
from collections.abc import Iterator
from typing import Annotated

import typer
import uvicorn

from services.processes import roles
from services.processes.api_worker import WORKERS_VARIABLE
from services.processes.bootstrap import Runtime
from services.processes.dev_key import show_dev_key
from services.processes.http_answer_writes import OneWriteHttpTools
from services.processes.http_lifespan import serving
from services.processes.lifetime import process_settings, run_process

# How long a worker may leave the supervisor's ping unanswered before it is killed as hung and
# started again. On a busy host a spawned worker can take longer than uvicorn's 5 s to start its
# interpreter, and a saturated worker's answering thread waits its turn for the interpreter like
# the rest: with 5 s, workers are killed before they serve, or in the middle of a load.
WORKER_HEALTHCHECK_SECONDS = 30  # gunicorn kills a silent worker after 30 s too

Host = Annotated[str | None, typer.Option(help="Defaults to FEEDBACKLOOP_HOST")]
Port = Annotated[int | None, typer.Option(help="Defaults to FEEDBACKLOOP_PORT")]


class Server(uvicorn.Server):
    """uvicorn, stopping on SIGINT/SIGTERM without re-raising the signal afterwards (which
    would kill the process before the runtime is closed and the embedded PostgreSQL stopped)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.handle_exit, sig, None)
        yield


async def serve_http(runtime: Runtime, everything: bool, host: str, port: int) -> None:
    config = uvicorn.Config(
        runtime.app(lambda _app: serving(runtime, everything)),
        host=host,
        port=port,
        http=OneWriteHttpTools,
        log_config=None,
    )
    show_dev_key(runtime, host, port)
    await Server(config).serve()


def serve(host: Host = None, port: Port = None) -> None:
    """Everything in one process: API, read models, and (with Kafka) relay and inbound."""
    settings = process_settings()
    host, port = host or settings.host, port or settings.port
    run_process(settings, roles.SERVE, lambda runtime: serve_http(runtime, True, host, port))


def api(
    host: Host = None,
    port: Port = None,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Worker processes (default: one per core, at most "
            f"{roles.API_DEFAULT_WORKERS}, with DATABASE_URL; 1 on the embedded default, "
            "whose PostgreSQL one process owns). Each holds up to "
            f"{roles.API.connections} connections (docs/operations.md)",
        ),
    ] = None,
) -> None:
    """The HTTP API alone (stateless; run as many replicas as you like).

    Runs with the production server settings: uvloop, the httptools parser, and
    one worker process per core (at most two unless --workers says more), each with a
    Runtime of its own (its pool, store and command bus), sharing the listening socket."""
    settings = process_settings()
    if workers is None:
        workers = 1 if settings.embedded else min(os.cpu_count() or 1, roles.API_DEFAULT_WORKERS)
    # Each worker reads its settings afresh (a worker process is spawned): what the options
    # say goes through the environment, like the rest of the settings.
    os.environ["FEEDBACKLOOP_HOST"] = host = host or settings.host
    os.environ["FEEDBACKLOOP_PORT"] = str(port := port or settings.port)
    os.environ[WORKERS_VARIABLE] = str(workers)  # read by each worker's metrics port
    uvicorn.run(
        "services.processes.api_worker:api_worker",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        loop="uvloop",
        http=OneWriteHttpTools,
        log_config=None,
        # uvicorn's access log costs a log record per request; the level decides.
        access_log=settings.log_level.upper() in ("DEBUG", "INFO"),
        timeout_worker_healthcheck=WORKER_HEALTHCHECK_SECONDS,
    )
