"""One worker process of ``feedbackloop api``: uvicorn imports ``api_worker`` by name in each
worker it spawns, and the worker opens a runtime of its own (its pools, store and command bus)
in the server's lifespan."""

import asyncio
import os
from typing import Any

from services.processes import roles
from services.processes.bootstrap import Runtime
from services.processes.collector import settle_collector
from services.processes.dev_key import show_dev_key
from services.processes.settings import Settings
from services.processes.starting import cancelled_on_stop_signal, start

# How many workers the command started: each worker's metrics port is one of that many.
WORKERS_VARIABLE = "FEEDBACKLOOP_API_WORKERS_STARTED"


def api_worker() -> "ApiWorker":
    """uvicorn's app factory for ``feedbackloop api`` (a worker process imports it by name)."""
    return ApiWorker(Settings())


class ApiWorker:
    """The ASGI app of one API worker: opens its own Runtime at the server's start-up
    (lifespan), then hands every request to the app built on it; closes it at shutdown.

    A factory cannot open the Runtime itself: uvicorn calls it inside the running loop,
    synchronously, and the pool belongs to that loop."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.runtime: Runtime | None = None
        self.app: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self.lifespan(receive, send)
            return
        await self.app(scope, receive, send)

    async def lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                starting = asyncio.create_task(self.start())
                try:
                    with cancelled_on_stop_signal(starting):
                        await starting
                except asyncio.CancelledError:
                    if not starting.cancelled():
                        raise  # this lifespan itself is cancelled
                    stopped = "stopped before it could start (waiting for PostgreSQL)"
                    await send({"type": "lifespan.startup.failed", "message": stopped})
                    return
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": repr(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.runtime is not None:
                    await self.runtime.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def start(self) -> None:
        workers = int(os.environ.get(WORKERS_VARIABLE, "1"))
        runtime = self.runtime = await start(self.settings, roles.API, workers=workers)
        await runtime.start_key_refresher()
        self.app = runtime.app()
        settle_collector()  # the app's routes and schemas, too
        show_dev_key(runtime, self.settings.host, self.settings.port)
