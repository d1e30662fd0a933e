"""An export's memory at 1,000,000 rows (decisions D211): the issue's bound is 200 MB RSS.

A fresh database is given ``--rows`` feedback rows of one tenant straight into the feedback
list's read model (COPY, in batches: what is measured is the export, not the writing), then
``feedbackloop exports feedback`` writes them all as CSV and as JSON Lines in a process of
its own, whose peak RSS (``ru_maxrss`` of the finished child) and wall time are recorded in
``<out>/exports.json``. The CLI reads through the same ``services.edge.exports`` pages the
HTTP route streams.

    DATABASE_URL=postgresql://… python ops/bench_exports.py [--rows 1000000] [--out var/bench]

``DATABASE_URL`` names a server where a database may be created (it is dropped after).
"""

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from projections.feedback_list import COLUMNS
from services.processes.bootstrap import Runtime
from services.processes.settings import Settings

TENANT = "bench-exports"
BATCH = 100_000
BOUND_MB = 200


def database(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


async def fill(url: str, rows: int) -> None:
    rt = await Runtime.open(Settings(database_url=url))  # type: ignore[call-arg]
    try:
        rt.start_projections(only=["feedback_list"])
        async with asyncio.timeout(60):
            while not await rt.pool.fetchval("SELECT to_regclass('rm_feedback_list.feedback')"):
                await asyncio.sleep(0.2)
        at = datetime.now(UTC)
        for start in range(0, rows, BATCH):
            batch = [
                (uuid.uuid4(), TENANT, "bench", "run", f"run-{n}", "rating", n % 5 + 1, None,
                 None, f"person-{n % 997}", at, 1_000_000_000 + n)
                for n in range(start, min(rows, start + BATCH))
            ]  # fmt: skip
            await rt.pool.copy_records_to_table(
                "feedback", schema_name="rm_feedback_list", records=batch, columns=COLUMNS
            )
    finally:
        await rt.close()


def exported(url: str, form: str, out: Path) -> dict[str, float]:
    """One export in a child process: its wall time and peak RSS (MB)."""
    env = {**os.environ, "DATABASE_URL": url}
    command = [sys.executable, "-m", "services.processes.cli", "exports", "feedback"]
    started = time.monotonic()
    subprocess.run(
        [*command, "--tenant", TENANT, "--out", str(out), "--format", form],
        env=env, check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    seconds = time.monotonic() - started
    # Every child so far is counted: run one export per process (see main) for its own peak.
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"seconds": round(seconds, 1), "peak_rss_mb": round(peak_mb, 1)}


async def make_database(url: str, name: str, drop: bool = False) -> None:
    admin = await asyncpg.connect(url)
    try:
        if drop:
            await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        else:
            await admin.execute(f"CREATE DATABASE {name}")
    finally:
        await admin.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--out", type=Path, default=Path("var/bench"))
    parser.add_argument("--form", choices=("csv", "jsonl"), default=None)
    args = parser.parse_args()
    server = os.environ["DATABASE_URL"]
    if args.form is not None:  # a child run: one export, its own peak
        with tempfile.TemporaryDirectory() as folder:
            print(json.dumps(exported(server, args.form, Path(folder) / f"out.{args.form}")))
        return 0
    name = f"bench_exports_{uuid.uuid4().hex[:8]}"
    asyncio.run(make_database(server, name))
    url = database(server, name)
    try:
        asyncio.run(fill(url, args.rows))
        results: dict[str, object] = {"rows": args.rows, "bound_mb": BOUND_MB}
        for form in ("csv", "jsonl"):
            child = subprocess.run(
                [sys.executable, __file__, "--form", form],
                env={**os.environ, "DATABASE_URL": url}, check=True, capture_output=True,
                text=True,
            )  # fmt: skip
            results[form] = json.loads(child.stdout.strip().splitlines()[-1])
    finally:
        asyncio.run(make_database(server, name, drop=True))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "exports.json").write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
