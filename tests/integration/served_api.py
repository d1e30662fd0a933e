"""The service's API served by a real uvicorn on a loop of its own thread, so that a blocking
client (``feedbackloop_client.Client``) and an asyncio one can both call it from a test, as
tests/integration/test_openapi_fuzz.py serves it to schemathesis."""

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import uvicorn

from services.processes.bootstrap import Runtime
from services.processes.settings import Settings
from services.store.event_store import EVENTS_TABLE

T = TypeVar("T")


@dataclass
class ServedApi:
    url: str
    runtime: Runtime
    loop: asyncio.AbstractEventLoop

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(60)

    def event_count(self) -> int:
        count = self.run(self.runtime.pool.fetchval(f"SELECT count(*) FROM {EVENTS_TABLE}"))
        assert isinstance(count, int)
        return count


@contextlib.contextmanager
def served_api(settings: Settings, projections: list[str] | None = None) -> Iterator[ServedApi]:
    """The runtime of ``settings`` with ``projections`` running (every read model if None),
    its API on a free loopback port."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="served-api", daemon=True)
    thread.start()
    runtime = asyncio.run_coroutine_threadsafe(Runtime.open(settings), loop).result(60)
    loop.call_soon_threadsafe(lambda: runtime.start_projections(only=projections))
    asyncio.run_coroutine_threadsafe(runtime.start_key_refresher(), loop).result(60)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    config = uvicorn.Config(runtime.app(), log_level="warning", lifespan="off", ws="none")
    server = uvicorn.Server(config)
    serving = asyncio.run_coroutine_threadsafe(server.serve(sockets=[sock]), loop)
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the app did not start"
        time.sleep(0.05)
    served = ServedApi(f"http://127.0.0.1:{port}", runtime, loop)
    try:
        yield served
    finally:
        server.should_exit = True
        serving.result(30)
        sock.close()
        served.run(runtime.close())
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
