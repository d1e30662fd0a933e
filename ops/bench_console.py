"""The console's pages as people open them (part ``console`` of ``ops/bench.py``).

The fresh database is filled by ``feedbackloop demo`` (a subprocess, as a newcomer runs it);
``feedbackloop api`` then serves it with the demo people's keys. Each page of the console's
navigation (``services.console.pages.PAGES``, so a page added there is measured without a
change here) is opened by the first demo person whose roles the page names, signed in through
the sign-in form as a browser is; the first link from the page to a page under its own path
(an Inbox item) is measured too, and a comparison's page (``measure_comparison``: the demo
holds none, so one is started first, against the demo's stand-in agent). Every GET of a page
alternates with a GET of the API's JSON behind the same data as the same person (or
``/healthz`` where no route is named here), so both see the machine in the same state and
their ratio is what the console adds on top of the read. Decisions D97.

    python ops/bench.py --parts console
"""

import asyncio
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from bench_api import start_api, stop_process
from bench_figures import Bench, Target, console, row

from services.console.pages import PAGES
from services.processes.demo.cast import AGENTS
from services.processes.demo.loading import standin_agent
from services.processes.demo.standin_script import SCRIPT

# The API's JSON behind a page: (its list, its item by the last segment of the page's link).
# A page not named here, or a route that does not answer, is measured against GET /healthz,
# the service's cheapest answer.
API_BEHIND: dict[str, tuple[str, str | None]] = {
    "inbox": ("/factory/reports/inbox", "/factory/reports/{id}"),
    "my-reports": ("/factory/reports/mine", "/factory/reports/{id}"),
    "my-agents": ("/factory/owners/agents", None),
    "eval-cases": ("/factory/evals/cases", None),
    "nights": ("/factory/evals/nights", "/factory/evals/nights/{id}"),
    "digests": ("/factory/feedback/digests", "/factory/feedback/digests/{id}"),
    "proposals": ("/factory/learning/proposals", "/factory/learning/proposals/{id}"),
    "datasets": ("/factory/evaluation/datasets", None),
    "appraisal": ("/factory/appraisal/charter", None),
    "operations": ("/factory/operations/readers", None),
    "audit": ("/factory/audit", None),
}
HEALTH = "/healthz"
STANDIN_MODEL = str(SCRIPT["modelName"])  # the model the demo's stand-in agent answers as
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@dataclass(frozen=True)
class Person:
    subject: str
    roles: tuple[str, ...]
    key: str


def load_demo(
    url: str, data_dir: Path, log: Path, environ: dict[str, str] | None = None
) -> list[Person]:
    """``feedbackloop demo`` into the database at ``url`` (empty: the embedded default under
    ``data_dir``); the people it made, in its order."""
    env = dict(os.environ if environ is None else environ)
    env["FEEDBACKLOOP_DATA_DIR"] = str(data_dir)
    if url:
        env["DATABASE_URL"] = url
    env["FEEDBACKLOOP_LOG_LEVEL"] = "WARNING"
    command = [str(Path(sys.executable).parent / "feedbackloop"), "demo"]
    with log.open("wb") as out:
        done = subprocess.run(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise RuntimeError(f"feedbackloop demo failed (exit {done.returncode}); see {log}")
    saved = json.loads((data_dir / "demo-keys.json").read_text())
    return [Person(p["subject"], tuple(p["roles"]), p["key"]) for p in saved]


def signed_in(base: str, key: str) -> httpx.Client:
    """A client signed in to the console with ``key`` through its form, as a browser is: the
    form's CSRF token echoed, the session cookie kept."""
    client = httpx.Client(base_url=base, timeout=30)
    form = client.get("/sign-in")
    found = CSRF.search(form.text)
    if found is None:
        raise RuntimeError(f"no CSRF field on the sign-in form ({form.status_code})")
    answer = client.post("/sign-in", data={"key": key, "csrf": found[1], "next": "/"})
    if answer.status_code != 303:
        raise RuntimeError(f"signing in answered {answer.status_code}: {answer.text[:200]}")
    return client


def percentiles(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)  # nearest rank, as ops/bench.py's latency_ms

    def at(p: int) -> float:
        return round(ordered[max(0, round(p / 100 * len(ordered)) - 1)] * 1000, 2)

    return {"p50": at(50), "p95": at(95), "max": at(100)}


def timed_pair(
    page: httpx.Client, api: httpx.Client, path: str, api_path: str, repeats: int, warm: int = 3
) -> dict[str, Any]:
    """``path`` on the console and ``api_path`` on the API, alternately, ``repeats`` times
    each after ``warm`` untimed rounds; every answer must be a 200."""
    seconds: dict[str, list[float]] = {"page": [], "api": []}
    for n in range(warm + repeats):
        for side, client, target in (("page", page, path), ("api", api, api_path)):
            start = time.perf_counter()
            answer = client.get(target)
            spent = time.perf_counter() - start
            if answer.status_code != 200:
                raise RuntimeError(f"GET {target} answered {answer.status_code}")
            if n >= warm:
                seconds[side].append(spent)
    return {
        "path": path,
        "api": api_path,
        "page_ms": percentiles(seconds["page"]),
        "api_ms": percentiles(seconds["api"]),
        "repeats": repeats,
    }


def detail_link(html: str, under: str) -> str | None:
    """The first link of a page to a page under its own path (an item of a list)."""
    found = re.search(r'href="(' + re.escape(under.rstrip("/")) + r'/[^"?#]+)"', html)
    return found[1] if found else None


def answering(api: httpx.Client, path: str | None) -> str:
    """``path`` if the API answers it with a 200 for this person, else ``/healthz``: a route
    guessed wrong in ``API_BEHIND`` costs a baseline, never the page's figure."""
    return path if path and api.get(path).status_code == 200 else HEALTH


def reader_of(page_roles: tuple[str, ...], people: list[Person]) -> Person:
    """The first person the page is for (the demo lists reporters first)."""
    for person in people:
        if not page_roles or set(page_roles) & set(person.roles):
            return person
    raise RuntimeError(f"no demo person holds any of {page_roles}")


def measure_pages(base: str, people: list[Person], repeats: int) -> list[dict[str, Any]]:
    """Each navigation page and the first item it links to, against the API behind it."""
    measured, clients = [], dict[str, tuple[httpx.Client, httpx.Client]]()
    try:
        for page in PAGES:
            person = reader_of(page.roles, people)
            if person.subject not in clients:
                bearer = {"Authorization": f"Bearer {person.key}"}
                api = httpx.Client(base_url=base, timeout=30, headers=bearer)
                clients[person.subject] = (signed_in(base, person.key), api)
            console, api = clients[person.subject]
            listed, item = API_BEHIND.get(page.name, (HEALTH, None))
            first = timed_pair(console, api, page.path, answering(api, listed), repeats)
            measured.append({"page": page.name, "person": person.subject, **first})
            link = detail_link(console.get(page.path).text, page.path)
            if link is not None:
                api_item = item.format(id=link.rsplit("/", 1)[-1]) if item else None
                second = timed_pair(console, api, link, answering(api, api_item), repeats)
                measured.append({"page": f"{page.name} item", "person": person.subject, **second})
    finally:
        for pair in clients.values():
            for client in pair:
                client.close()
    return measured


@contextmanager
def standin() -> Iterator[dict[str, str]]:
    """The demo's stand-in agent over real HTTP, served from a thread of its own while the
    block runs: the settings that point the API at it."""
    ready: queue.Queue[str] = queue.Queue()
    stop = threading.Event()

    async def serve() -> None:
        async with standin_agent() as url:
            ready.put(url)
            while not stop.is_set():
                await asyncio.sleep(0.05)

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    try:
        url = ready.get(timeout=30)
        yield {"FEEDBACKLOOP_AGENT_URL": url, "FEEDBACKLOOP_AGENT_MODEL": STANDIN_MODEL}
    finally:
        stop.set()
        thread.join(10)


def measure_comparison(base: str, people: list[Person], repeats: int) -> dict[str, Any]:
    """The page of a comparison (the billing agent's confirmed cases, three conversations a
    case and side, the stand-in's model on both), started by the agent's maintainer through
    the API as the CI gate starts one, against ``GET /factory/evals/comparisons/{id}``."""
    agent = AGENTS[1]
    [person] = [p for p in people if p.subject == agent.maintainer.subject]
    bearer = {"Authorization": f"Bearer {person.key}"}
    with httpx.Client(base_url=base, timeout=300, headers=bearer) as api:
        body = {"agent": agent.path, "candidate": {"model": STANDIN_MODEL}}
        started = api.post("/factory/evals/comparisons", json=body)
        if started.status_code != 201:
            raise RuntimeError(f"the comparison answered {started.status_code}: {started.text}")
        view = started.json()
        found = view["comparisonId"]
        if not view["cases"] or view["notCompared"] == len(view["cases"]):
            raise RuntimeError(f"the comparison compared no case: {started.text[:500]}")
        path, api_path = f"/eval-cases/comparisons/{found}", f"/factory/evals/comparisons/{found}"
        console = signed_in(base, person.key)
        try:
            measured = timed_pair(console, api, path, api_path, repeats)
        finally:
            console.close()
    shown = {key: view[key] for key in ("regressed", "fixed", "unchanged", "notCompared")}
    return {"page": "a comparison", "person": person.subject, "cases": shown, **measured}


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
