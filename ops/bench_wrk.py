"""wrk, the compiled load generator, driving ``feedbackloop api`` with
``ops/wrk_record_feedback.lua``: each request a new RecordFeedback and Idempotency-Key."""

import json
import os
import subprocess
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WRK_SCRIPT = ROOT / "ops" / "wrk_record_feedback.lua"


def wrk(
    base: str, key: str, seconds: int, connections: int, batch: int = 0, delay_ms: int = 0
) -> dict[str, Any]:
    """One run of wrk with the Lua script; its summary line, as numbers."""
    env = os.environ | {"BENCH_KEY": key, "BENCH_RUN": uuid.uuid4().hex[:10]}
    env |= {"BENCH_BATCH": str(batch), "BENCH_DELAY_MS": str(delay_ms)}
    threads = str(min(2, connections))
    command = [
        "wrk",
        "-t",
        threads,
        "-c",
        str(connections),
        "-d",
        f"{seconds}s",
        "--timeout",
        "10s",
    ]
    done = subprocess.run(
        [*command, "-s", str(WRK_SCRIPT), base], env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed: {done.stderr or done.stdout}")
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    summary["errors"] = sum(
        summary[k]
        for k in ("connect_errors", "read_errors", "write_errors", "status_errors", "timeouts")
    )
    summary["seconds"] = summary["duration_us"] / 1e6
    return summary
