"""Part ``console`` of ``ops/bench.py``: the demo loaded into the part's database, then the
console's pages against the API's JSON of the same data (``ops/bench_console.py``)."""

import shutil
import tempfile
from pathlib import Path
from typing import Any

from bench_api import start_api, stop_process
from bench_console import load_demo, measure_comparison, measure_pages, standin
from bench_figures import Bench, Target, console, row


def part_console(bench: Bench) -> list[dict[str, Any]]:
    """10. Every page of the console's navigation, and the first item each lists, with the
    demo's data (``ops/bench_console.py``): p95 at most 300 ms, beside the API's JSON of the
    same data as the same person, measured alternately with it."""
    repeats = bench.args.page_repeats
    console.print(f"[bold]10.[/] the console: `feedbackloop demo`, then {repeats} GETs a page …")
    data = Path(tempfile.mkdtemp(prefix="fl-bench-demo-"))
    try:
        people = load_demo(bench.url, data, bench.out / "demo.log")
        keys = (data / "demo-api-keys.json").read_text()
    finally:
        shutil.rmtree(data, ignore_errors=True)
    with standin() as agent:  # a comparison runs its conversations
        # One worker: the pages are opened one after the other, by one client at a time.
        api = start_api(bench.url, keys, bench.out, workers=1, settings=agent)
        try:
            pages = measure_pages(api.base, people, repeats)
            pages.append(measure_comparison(api.base, people, repeats))
        finally:
            stop_process(api.process)
    bench.details |= {"console_pages": pages}
    return [
        figure
        for page in pages
        for figure in (
            row(
                f"Console: {page['page']} ({page['person']}), p95",
                page["page_ms"]["p95"],
                "ms",
                f"API GET {page['api']}",
                page["api_ms"]["p95"],
                Target(300, at_most=True),
            ),
            row("  p50", page["page_ms"]["p50"], "ms", "the API's p50", page["api_ms"]["p50"]),
        )
    ]
