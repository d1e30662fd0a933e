"""Readings taken around a run: its timings as latency percentiles, this process's peak
memory, the machine's busy CPU so far."""

import os
import resource
from pathlib import Path


def latency_ms(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    rank = {"p50": 50, "p95": 95, "p99": 99, "max": 100}  # nearest-rank percentiles
    return {
        k: round(ordered[max(0, round(p / 100 * len(ordered)) - 1)] * 1000, 2)
        for k, p in rank.items()
    }


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # KiB on Linux


def machine_busy() -> float:
    """CPU seconds spent busy so far, all CPUs and processes, ours or not (/proc/stat)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(values) - values[3] - values[4]) / os.sysconf("SC_CLK_TCK")
