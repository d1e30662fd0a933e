"""Part ``proposals`` of ``ops/bench.py``: the figure of the daily proposal run against the
evidence behind it, measured by ``ops/bench_proposals.py``."""

import asyncio
from typing import Any

from bench_figures import Bench, Target, console, row
from bench_proposals import bench_proposals


def part_proposals(bench: Bench) -> list[dict[str, Any]]:
    """8. The daily proposal run with 10,000 and with ``--evidence`` evidence events behind it
    (``ops/bench_proposals.py``): flat means at most 50 % more."""
    sizes = (10_000, bench.args.evidence)
    console.print(f"[bold]8.[/] the proposal run with {sizes[0]:,} and {sizes[1]:,} evidence …")
    small, large = asyncio.run(bench_proposals(bench.url, sizes))
    bench.details |= {"proposal_runs": [small, large]}
    ready = small["ready_clusters"]
    return [
        row(
            f"Proposal run, {ready} ready clusters, {sizes[1]:,} evidence events behind it",
            round(large["median_s"] * 1000, 1),
            "ms",
            f"same, {sizes[0]:,} evidence events",
            round(small["median_s"] * 1000, 1),
            Target(1.5, of="ratio", at_most=True),
        ),
    ]
