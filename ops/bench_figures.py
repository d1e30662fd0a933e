"""What a part of ``ops/bench.py`` gets (``Bench``: a fresh database, the options, where to
write), where it prints (``console``), and what it gives back: rows, each a figure beside its
baseline and target (``row``, ``Target``), a baseline measured before and after its figure
(``bracketing``)."""

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from services.store.event_store import EventStore

console = Console(width=None if sys.stdout.isatty() else 120)


def bracketing(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """A baseline measured before its figure and again after it: events/s over both, so that
    it sees the machine as the figure did (each half is kept). Measured once, in its own few
    seconds, it moves with the machine's state more than the figure does with the code
    (docs/benchmarks.md has the runs that showed it)."""
    events, seconds = before["events"] + after["events"], before["seconds"] + after["seconds"]
    return {
        "events": events,
        "seconds": round(seconds, 3),
        "events_per_s": round(events / seconds, 1),
        "before": before,
        "after": after,
    }


@dataclass(frozen=True)
class Target:
    """What a figure must reach: its value (or its ratio to the baseline) at least / at most
    ``bound``."""

    bound: float
    of: str = "value"  # or "ratio"
    at_most: bool = False

    def met(self, value: float, ratio: float | None) -> bool | None:
        measured = ratio if self.of == "ratio" else value
        if measured is None:
            return None
        return measured <= self.bound if self.at_most else measured >= self.bound

    def text(self, unit: str) -> str:
        sign = "≤" if self.at_most else "≥"
        return (
            f"ratio {sign} {self.bound:g}"
            if self.of == "ratio"
            else f"{sign} {self.bound:g} {unit}"
        )


def row(
    name: str,
    value: float,
    unit: str,
    baseline: str | None = None,
    baseline_value: float | None = None,
    target: Target | None = None,
    ratio: float | None = None,
) -> dict[str, Any]:
    """One figure of the results: the keys of every row, ``met`` computed here. ``ratio``:
    given by a figure measured in turns with its baseline (``bench_privacy.interleaved``),
    else the value's to the baseline's."""
    if ratio is None:
        ratio = round(value / baseline_value, 3) if baseline_value else None
    return {
        "name": name,
        "value": value,
        "unit": unit,
        "baseline": baseline,
        "baseline_value": baseline_value,
        "ratio": ratio,
        "target": target.text(unit) if target else None,
        "met": target.met(value, ratio) if target else None,
    }


@dataclass
class Bench:
    """What a part gets: a fresh database (store and URL), the options, where to write, and
    where to leave its raw measurements (``details``)."""

    store: EventStore
    url: str
    args: argparse.Namespace
    out: Path
    details: dict[str, Any] = field(default_factory=dict)


Part = Callable[[Bench], list[dict[str, Any]]]
