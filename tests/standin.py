"""The stand-in agent (``services/evals/standin.py``) as a process of its own, for tests that
need a real agent over HTTP."""

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import uvicorn

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def served(app: Any, port: int = 0, **config: Any) -> AsyncIterator[int]:
    """An ASGI app served by a real uvicorn in this event loop on ``port`` (0: any free one);
    yields its port. The socket is bound before serving, so no other process can take the port
    meanwhile."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    port = int(sock.getsockname()[1])
    config = {"log_level": "warning", "ws": "none"} | config
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, **config))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        async with asyncio.timeout(10):
            while not server.started:
                if task.done():
                    task.result()  # the server's own failure, if it has one
                    raise RuntimeError("the server stopped before it started")
                await asyncio.sleep(0.01)
        yield port
    finally:
        server.should_exit = True
        await task
        sock.close()


@contextlib.contextmanager
def standin_agent(script: dict[str, Any], tmp_path: Path, port: int | None = None) -> Iterator[str]:
    """The stand-in agent as its own process, answering as ``script`` says, on ``port`` (a
    free one if not given: a test that must know the URL before it is up passes its own);
    yields its URL."""
    path = tmp_path / f"script-{uuid.uuid4().hex[:6]}.json"
    path.write_text(json.dumps(script))
    port = free_port() if port is None else port
    process = subprocess.Popen(
        [sys.executable, "-m", "services.evals.standin", "--script", str(path),
         "--port", str(port), "--log-level", "warning"],
        cwd=ROOT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                if process.poll() is not None:
                    raise RuntimeError("the stand-in agent exited") from None
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
