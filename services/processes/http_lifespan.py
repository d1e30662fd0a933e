"""The HTTP server's lifespan: what a serving process starts beside its API, and the runtime
closed at the server's shutdown."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from services.processes.bootstrap import Runtime


@asynccontextmanager
async def serving(runtime: Runtime, everything: bool) -> AsyncIterator[None]:
    """The HTTP server's lifespan. With ``everything``, one process runs it all: API, read
    models, hand-over webhook, relay and inbound consumers. The runtime is closed here, at
    the server's shutdown, because uvicorn re-raises SIGTERM once it has shut down."""
    broker = None
    try:
        await runtime.start_key_refresher()
        await runtime.start_grpc()  # the API's processes answer gRPC too (SPEC C22)
        if everything:
            runtime.start_projections()
            runtime.start_handover_webhook()
            runtime.start_agent_webhooks()
            runtime.start_intake()
            await runtime.start_relay()
            broker = await runtime.start_inbound()
            runtime.start_scheduler()
        yield
    finally:
        if broker is not None:
            await broker.stop()
        await runtime.close()
