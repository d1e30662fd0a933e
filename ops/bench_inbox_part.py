"""Part ``inbox`` of ``ops/bench.py``: the Inbox filled through the command bus, then its
pages against the API's same query (``ops/bench_inbox.py``)."""

import json
from typing import Any

from bench_api import start_api, stop_process
from bench_figures import Bench, Target, console, row
from bench_inbox import REVIEWER, measure_inbox
from bench_inbox import TENANT as INBOX_TENANT
from bench_inbox import fill as fill_inbox

from services.edge.auth import SCOPES, new_key


def part_inbox(bench: Bench) -> list[dict[str, Any]]:
    """11. The console's Inbox with ``--inbox-reports`` reports in one tenant
    (``ops/bench_inbox.py``): the first page, a filtered one and one deep in the cursor chain,
    each beside the API's JSON of the same query and cursor."""
    count, repeats = bench.args.inbox_reports, bench.args.page_repeats
    console.print(f"[bold]11.[/] the Inbox: {count:,} reports through the bus, then the pages …")
    filled = fill_inbox(bench.url, count)
    key, entry = new_key(INBOX_TENANT, REVIEWER, list(SCOPES), roles=["Reviewer"])
    api = start_api(bench.url, json.dumps([entry]), bench.out, workers=1)
    try:
        pages = measure_inbox(api.base, key, repeats, count)
    finally:
        stop_process(api.process)
    bench.details |= {"inbox_filled": filled, "inbox_pages": pages}
    return [
        row(
            f"Console Inbox, {count:,} reports: {page['page']}, p95",
            page["page_ms"]["p95"],
            "ms",
            "API GET /factory/reports/inbox, same query",
            page["api_ms"]["p95"],
            Target(300, at_most=True),
        )
        for page in pages
    ]
