"""A sparkline: a small line of numbers over time, drawn on the server as inline SVG with its
text alternative, so a page needs no chart library and a screen reader hears the numbers."""

from collections.abc import Sequence

from markupsafe import Markup, escape

WIDTH, HEIGHT, PAD = 120, 30, 4


def sparkline(points: Sequence[tuple[str, int]], what: str) -> Markup:
    """``points``: (label, value), oldest first. The SVG is an image named by ``what`` and
    every point (``what, 2026-W45 3, 2026-W46 5``): the line shows the shape, the name says
    the figures."""
    named = f"{what}: " + ", ".join(f"{label} {value}" for label, value in points)
    if not points:
        return Markup('<span class="sparkline-none">{}</span>').format(f"{what}: none")
    top = max(1, *(value for _, value in points))
    step = (WIDTH - 2 * PAD) / max(1, len(points) - 1)
    xy = [
        (PAD + index * step, HEIGHT - PAD - value / top * (HEIGHT - 2 * PAD))
        for index, (_, value) in enumerate(points)
    ]
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
    last_x, last_y = xy[-1]
    return Markup(
        f'<svg class="sparkline" role="img" aria-label="{escape(named)}" '
        f'width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}">'
        f"<title>{escape(named)}</title>"
        f'<polyline points="{line}" fill="none" stroke="currentColor" stroke-width="1.5"/>'
        f'<circle cx="{last_x:.1f}" cy="{last_y:.1f}" r="2.5" fill="currentColor"/></svg>'
    )
