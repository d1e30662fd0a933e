"""The local servers' processes as the machine shows them: a loopback port that is free, whether
a pid is alive and what it runs, the end of a server's log, and the `[localservers]` line on
stderr. Shared by the Kafka broker (local_kafka.py), PostgreSQL (local_postgres.py) and the CLI
(localservers.py).

Standard library only.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path


def _log(msg: str) -> None:
    print(f"[localservers] {msg}", file=sys.stderr, flush=True)


def free_port() -> int:
    """A loopback port that was free a moment ago (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _tail(path: Path, lines: int = 40) -> str:
    """Last lines of a log, preceded by its first ERROR lines (shutdown chatter buries them)."""
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    errors = [line for line in text if " ERROR " in line or "FATAL" in line][:5]
    return "\n".join([*errors, "...", *text[-lines:]] if errors else text[-lines:])


def _pid_alive(pid: int | None) -> bool:
    """True if pid exists and is not a zombie (a dead child we have not reaped)."""
    if not pid:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""
