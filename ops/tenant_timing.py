"""How much later another tenant's existing id is refused than a random id.

A report of tenant A (three events; with ``--big`` its first event is ~24 KB) is submitted by
tenant B under its own id and under random ids, interleaved; the median of N of each, through
the HTTP app in process and at the store alone (``load_owned``). On a fresh database of the
PostgreSQL in ``TEST_DATABASE_URL`` (``DATABASE_URL`` otherwise), dropped afterwards.

``--trigger`` measures instead what the owners' trigger adds to an append: N
rounds of 1,000 RecordFeedback commands as Kafka ingest appends them (each a feedback event
and a receipt, one transaction), alternately with the trigger on and off; the median of each.

    python ops/tenant_timing.py [N] [--big] [--trigger]
"""

import asyncio
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import httpx

from contracts.errors import NotFound
from contracts.feedback import RecordFeedback
from services.bus.command_bus import Receipt
from services.edge.auth import SCOPES, new_key
from services.feedback.domain import Feedback
from services.processes.bootstrap import Runtime
from services.processes.settings import Settings
from services.store.event_store import EVENTS_TABLE
from services.store.owners import load_owned

TENANTS_TRIGGER = "feedbackloop_record_tenant"  # services.store.event_store's owners' trigger

WARM_UP = 100


async def medians(n: int, probe: Callable[[str], Awaitable[None]]) -> dict[str, float]:
    """Median seconds of ``probe("foreign")`` and ``probe("random")``, alternating their order."""
    times: dict[str, list[float]] = {"foreign": [], "random": []}
    for i in range(n + WARM_UP):
        for path in ("foreign", "random") if i % 2 else ("random", "foreign"):
            start = time.perf_counter()
            await probe(path)
            if i >= WARM_UP:
                times[path].append(time.perf_counter() - start)
    return {path: statistics.median(values) for path, values in times.items()}


def show(what: str, found: dict[str, float]) -> None:
    foreign, random = found["foreign"] * 1000, found["random"] * 1000
    print(f"{what}: foreign {foreign:.3f} ms, random {random:.3f} ms, {foreign - random:+.3f} ms")


async def measure(runtime: Runtime, a: str, b: str, n: int, big: bool) -> None:
    transport = httpx.ASGITransport(app=runtime.app())
    async with httpx.AsyncClient(transport=transport, base_url="http://timing") as client:
        as_a, as_b = {"Authorization": f"Bearer {a}"}, {"Authorization": f"Bearer {b}"}
        body = {"category": "answer", "message": "it said CHF 200 " + "x" * (7900 if big else 200)}
        if big:
            body["extraContext"] = "".join(chr(65 + (i * 7919) % 57) for i in range(15900))
        drafted = await client.post("/factory/reports", json=body, headers=as_a)
        report_id = drafted.json()["reportId"]
        await client.post(f"/factory/reports/{report_id}/submit", headers=as_a)
        review = {"status": "Triaged"}
        await client.post(f"/factory/reports/{report_id}/review", json=review, headers=as_a)

        async def over_http(path: str) -> None:
            target = report_id if path == "foreign" else str(uuid.uuid4())
            answer = await client.post(f"/factory/reports/{target}/submit", headers=as_b)
            assert answer.status_code == 404, answer.text

        async def at_the_store(path: str) -> None:
            target = uuid.UUID(report_id) if path == "foreign" else uuid.uuid4()
            try:
                load_owned(runtime.store, "tenant-b", target, "report")
            except NotFound:
                return
            raise AssertionError("tenant B loaded tenant A's report")

        show("HTTP submit", await medians(n, over_http))
        show("store     ", await medians(n, at_the_store))


def trigger_share(runtime: Runtime, rounds: int, commands: int = 1000) -> None:
    """Median time of appending ``commands`` feedback events and receipts with the owners'
    trigger on and off (alternating, so both see the same load)."""
    store = runtime.store
    command = RecordFeedback.model_validate(
        {"projectId": "p", "subjectKind": "run", "subjectRef": "r", "kind": "rating", "rating": 3}
    )
    times: dict[str, list[float]] = {"on": [], "off": []}
    datastore = store.recorder.datastore  # type: ignore[attr-defined]  # PostgreSQL's
    for _ in range(rounds):
        for state in ("on", "off"):
            at, events = datetime.now(UTC), []
            for n in range(commands):
                identity = f"timing/{uuid.uuid4()}"
                events += [
                    Feedback.recorded(
                        command,
                        feedback_id=uuid.uuid4(),
                        tenant_id="tenant-a",
                        given_by="alice",
                        given_at=at,
                        command_id=f"c{n}",
                        request_digest="d",
                    ),
                    Receipt.recorded(identity, "RecordFeedback", at),
                ]
            stored = [store.mapper.to_stored_event(event) for event in events]
            with datastore.transaction(commit=True) as curs:
                switch = "ENABLE" if state == "on" else "DISABLE"
                curs.execute(f"ALTER TABLE {EVENTS_TABLE} {switch} TRIGGER {TENANTS_TRIGGER}")
            start = time.perf_counter()
            store.recorder.insert_events(stored)
            times[state].append(time.perf_counter() - start)
    with datastore.transaction(commit=True) as curs:
        curs.execute(f"ALTER TABLE {EVENTS_TABLE} ENABLE TRIGGER {TENANTS_TRIGGER}")
    on, off = (statistics.median(times[s]) * 1000 for s in ("on", "off"))
    print(
        f"append of {commands} commands ({2 * commands} events): trigger on {on:.1f} ms, "
        f"off {off:.1f} ms; the trigger {on - off:+.1f} ms ({(on - off) / on:.0%})"
    )


async def main(n: int, big: bool, trigger: bool = False) -> None:
    server = os.environ.get("TEST_DATABASE_URL") or os.environ["DATABASE_URL"]
    name = f"timing_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(server)
    await admin.execute(f"CREATE DATABASE {name}")
    await admin.close()
    url = urlunsplit(urlsplit(server)._replace(path=f"/{name}"))
    a, entry_a = new_key("tenant-a", "alice", list(SCOPES))
    b, entry_b = new_key("tenant-b", "bob", list(SCOPES))
    keys = json.dumps([entry_a, entry_b])
    runtime = await Runtime.open(Settings(database_url=url, api_keys=keys, metrics_port=0))
    try:
        if trigger:
            await asyncio.to_thread(trigger_share, runtime, n)
        else:
            await measure(runtime, a, b, n, big)
    finally:
        await runtime.close()
        admin = await asyncpg.connect(server)
        await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        await admin.close()


if __name__ == "__main__":
    args = [arg for arg in sys.argv[1:] if not arg.startswith("--")]
    trigger = "--trigger" in sys.argv
    default = 10 if trigger else 1500
    asyncio.run(main(int(args[0]) if args else default, "--big" in sys.argv, trigger))
