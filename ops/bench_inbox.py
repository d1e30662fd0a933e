"""The Inbox at 10,000 reports (part ``inbox`` of ``ops/bench.py``).

One tenant is given ``count`` reports through the command bus in batches (as the HTTP batch
route hands commands to it: decided together, appended in one transaction), by fifty
reporters: wrong answers about twenty agents, composed so their kinds vary, and every fourth a
plain question; every third is then triaged by a reviewer. The Inbox read model applies them
all before anything is measured. A reviewer signed in to the console then opens the first
page, a filtered page (one agent's New reports) and a page deep in the cursor chain (reached
by following "Older" from the first page, as a person would), each alternately with the API's
JSON of the same query and cursor. Decisions D98.

    python ops/bench.py --parts inbox
"""

import asyncio
import html
import json
import re
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
from bench_api import start_api, stop_process
from bench_console import signed_in, timed_pair
from bench_figures import Bench, Target, console, row

from contracts.reports import (
    ComposeWrongAnswer,
    DraftReport,
    ReviewReport,
    ReviewReportCommand,
    SubmitReport,
)
from services.bus.issued import Issued
from services.edge.auth import SCOPES, new_key
from services.processes.bootstrap import Runtime
from services.processes.demo.loading import caught_up
from services.processes.settings import Settings

TENANT = "bench-inbox"
REVIEWER = "rhea.reviewer"
AGENTS = 20
REPORTERS = 50
BATCH = 500
OLDER = re.compile(r'<a href="([^"]+)">Older</a>')


def report(n: int) -> DraftReport | ComposeWrongAnswer:
    """Report ``n``: a plain question every fourth, else a wrong answer whose tool call and
    evidence vary so that the composed kinds do (SPEC W14, W15)."""
    if n % 4 == 3:
        return DraftReport.model_validate(
            {"category": "question", "message": f"Which agent answers question {n}?"}
        )
    agent = f"Bench/Agent/A{n % AGENTS:02d}"
    looked = n % 3 == 0
    calls = [{"name": "Get", "arguments": "handbook/x", "result": "the page"}] if looked else []
    return ComposeWrongAnswer.model_validate(
        {
            "thread": f"thread-{n}",
            "messageRef": f"thread-{n}/m-1",
            "prompt": f"Question number {n}?",
            "reply": {"agentName": agent, "modelName": "model-1", "toolCalls": calls,
                      "text": "I don't know."},
            "account": f"Report {n}: the agent did not find the answer in the handbook.",
            "evidence": {"node": "handbook/x", "readable": n % 7 != 0},
        }
    )  # fmt: skip


def issued(command: Any, actor: str, role: str, n: int, step: str) -> Issued:
    return Issued(
        command,
        TENANT,
        actor,
        f"inbox-bench/{step}/{n}",
        datetime.now(UTC),
        roles=frozenset({role}),
    )


async def in_batches(runtime: Runtime, commands: list[Issued]) -> list[Any]:
    """Each command's result, the batches one after the other; a refusal stops the part."""
    results: list[Any] = []
    for start in range(0, len(commands), BATCH):
        for outcome in await runtime.bus.execute_batch(commands[start : start + BATCH], None):
            if isinstance(outcome, BaseException):
                raise outcome
            results.append(outcome.result)
    return results


async def fill_inbox(url: str, count: int) -> dict[str, Any]:
    """``count`` reports drafted and submitted, every third triaged; the Inbox caught up."""
    settings = Settings(database_url=url, topic_prefix=f"b{uuid.uuid4().hex[:8]}.")
    runtime = await Runtime.open(settings)
    try:
        runtime.start_projections(["inbox"])
        start = time.perf_counter()
        reporters = [f"person-{n % REPORTERS}" for n in range(count)]
        drafts = [issued(report(n), reporters[n], "Requester", n, "draft") for n in range(count)]
        ids = [state.report_id for state in await in_batches(runtime, drafts)]
        submits = [
            issued(SubmitReport(report_id=i), reporters[n], "Requester", n, "submit")
            for n, i in enumerate(ids)
        ]
        await in_batches(runtime, submits)
        triage = ReviewReport(status="Triaged")
        reviews = [
            issued(
                ReviewReportCommand(report_id=i, review=triage), REVIEWER, "Reviewer", n, "review"
            )
            for n, i in enumerate(ids)
            if n % 3 == 0
        ]
        await in_batches(runtime, reviews)
        written = time.perf_counter() - start
        await caught_up(runtime)
        async with runtime.pool.acquire() as conn:
            await conn.execute("VACUUM ANALYZE rm_inbox.reports")  # as a long-lived table is
        return {
            "reports": count,
            "commands": len(drafts) + len(submits) + len(reviews),
            "written_s": round(written, 1),
            "applied_s": round(time.perf_counter() - start, 1),
        }
    finally:
        await runtime.close()


def deep_link(client: httpx.Client, first: str, pages: int) -> tuple[str, int]:
    """The page reached by following "Older" ``pages`` times from ``first`` (or the last)."""
    path, depth = first, 0
    while depth < pages:
        found = OLDER.search(client.get(path).text)
        if found is None:
            break
        path, depth = html.unescape(found[1]), depth + 1
    return path, depth


def measure_inbox(base: str, key: str, repeats: int, count: int) -> list[dict[str, Any]]:
    """The first page, one agent's New reports, and a page three quarters down the chain."""
    console = signed_in(base, key)
    api = httpx.Client(base_url=base, timeout=30, headers={"Authorization": f"Bearer {key}"})
    try:
        filtered = f"/inbox?status=New&agent=Bench/Agent/A{AGENTS // 2:02d}"
        deep, depth = deep_link(console, "/inbox", count * 3 // 4 // 50)
        measured = []
        for name, path in (("first page", "/inbox"), ("filtered", filtered),
                           (f"page {depth + 1}", deep)):  # fmt: skip
            behind = "/factory/reports/inbox" + path.removeprefix("/inbox")
            measured.append({"page": name, **timed_pair(console, api, path, behind, repeats)})
        return measured
    finally:
        console.close()
        api.close()


def fill(url: str, count: int) -> dict[str, Any]:
    return asyncio.run(fill_inbox(url, count))


def part_inbox(bench: Bench) -> list[dict[str, Any]]:
    """11. The console's Inbox with ``--inbox-reports`` reports in one tenant
    (``ops/bench_inbox.py``): the first page, a filtered one and one deep in the cursor chain,
    each beside the API's JSON of the same query and cursor."""
    count, repeats = bench.args.inbox_reports, bench.args.page_repeats
    console.print(f"[bold]11.[/] the Inbox: {count:,} reports through the bus, then the pages …")
    filled = fill(bench.url, count)
    key, entry = new_key(TENANT, REVIEWER, list(SCOPES), roles=["Reviewer"])
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
