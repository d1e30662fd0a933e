"""The pass rate of a case over time, drawn on the server as a small inline SVG.

One line per runner (SPEC W58: runs compare only within one runner, never across): each point
is the share of that runner's runs passed so far, oldest run first, so the line shows whether
the case is getting better or worse. No chart library and no script: the SVG is plain markup,
and ``summary`` is its text alternative (decisions D82).
"""

from dataclasses import dataclass
from typing import Any

WIDTH, HEIGHT, PAD = 360, 120, 24
LEFT = 44  # room for the axis labels
COLOURS = ("#0b57d0", "#a4161a", "#1a7f37", "#6e40c9")  # contrast ≥ 4.5:1 on white


@dataclass(frozen=True)
class Dot:
    x: float
    y: float
    passed: bool
    title: str


@dataclass(frozen=True)
class Line:
    label: str
    colour: str
    points: str  # the polyline's "x,y x,y …"
    dots: tuple[Dot, ...]
    summary: str


def who(line: dict[str, Any]) -> str:
    return f"{'nightly' if line['runner'] == 'night' else 'manual'} runs by {line['ranBy']}"


def pass_rate_chart(history: list[dict[str, Any]]) -> list[Line]:
    """The lines of ``history`` (the read model's ``pass_rate_history``: newest first, per
    runner), drawn in a WIDTH × HEIGHT box: x the run's place among every run of the case
    (one time axis for all lines), y the pass rate of its own line so far."""
    times = sorted({run["recordedAt"] for line in history for run in line["points"]})
    step = (WIDTH - LEFT - PAD) / max(1, len(times) - 1)
    place_of = {
        at: LEFT + place * step if len(times) > 1 else (LEFT + WIDTH - PAD) / 2
        for place, at in enumerate(times)
    }
    lines = []
    for number, line in enumerate(history):
        runs = list(reversed(line["points"]))  # oldest first
        passed, dots = 0, []
        for count, run in enumerate(runs, start=1):
            passed += 1 if run["passed"] else 0
            rate = passed / count
            x = place_of[run["recordedAt"]]
            y = HEIGHT - PAD - rate * (HEIGHT - 2 * PAD)
            verdict = "passed" if run["passed"] else "failed"
            title = f"{run['recordedAt'][:16].replace('T', ' ')} UTC: {verdict}, {rate:.0%} so far"
            dots.append(Dot(round(x, 1), round(y, 1), bool(run["passed"]), title))
        summary = (
            f"{who(line)}: {line['passed']} of {line['runs']} passed ({line['passRate']:.0%}); "
            f"the latest {'passed' if runs[-1]['passed'] else 'failed'}"
        )
        lines.append(
            Line(
                who(line),
                COLOURS[number % len(COLOURS)],
                " ".join(f"{dot.x},{dot.y}" for dot in dots),
                tuple(dots),
                summary,
            )
        )
    return lines
