"""The stand-in agent (``services/evals/standin.py``) as a process of its own, for tests that
need a real agent over HTTP."""

import contextlib
import json
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def standin_agent(script: dict[str, Any], tmp_path: Path) -> Iterator[str]:
    """The stand-in agent as its own process, answering as ``script`` says; yields its URL."""
    path = tmp_path / f"script-{uuid.uuid4().hex[:6]}.json"
    path.write_text(json.dumps(script))
    port = free_port()
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
