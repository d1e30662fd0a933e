"""How the demo is loaded into a runtime: the stand-in agent served on a free local port, a key
for each person of the cast, the read models running, the service's HTTP app in process, and
the steps of the scenario one after the other (decisions D68, D69)."""

import asyncio
import json
import logging
import os
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import uvicorn

from services.declaration import Given
from services.edge.auth import SCOPES, ApiKeyEntry, KeyRing, new_key
from services.edge.http import Http
from services.evals.standin import Script, build_standin_app
from services.permissions.agent_register import registration
from services.processes import scheduled
from services.processes.bootstrap import Runtime
from services.processes.demo.cast import AGENTS, PEOPLE, TENANT, Clock
from services.processes.demo.scenario import STEPS, Demo
from services.processes.demo.standin_script import SCRIPT
from services.processes.http_app import http_app
from services.scheduling.orders import Order

CATCH_UP_SECONDS = 120.0
KEYS_FILE = "demo-keys.json"
API_KEYS_FILE = "demo-api-keys.json"


class AlreadyLoaded(Exception):
    """The demo is in this store already (decisions D69)."""


async def loaded_already(runtime: Runtime) -> bool:
    """The first thing the demo writes is its first agent's register entry."""
    found = await asyncio.to_thread(registration, runtime.store, TENANT, AGENTS[0].path)
    return found is not None


@asynccontextmanager
async def standin_agent() -> AsyncIterator[str]:
    """The stand-in agent, scripted for the demo's cases, over real HTTP: its URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = build_standin_app(Script.model_validate(SCRIPT))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        sock.close()


def people_keys() -> tuple[dict[str, str], list[ApiKeyEntry]]:
    """A fresh key for each person of the cast, every scope, the roles the cast gives them."""
    keys, entries = {}, []
    for person in PEOPLE:
        key, entry = new_key(TENANT, person.subject, list(SCOPES), roles=list(person.roles))
        keys[person.subject] = key
        entries.append(ApiKeyEntry.model_validate(entry))
    return keys, entries


def save_keys(data_dir: Path, keys: dict[str, str], entries: list[ApiKeyEntry]) -> None:
    """The people's keys, for signing in as them: ``demo-keys.json`` names each person, their
    roles and key; ``demo-api-keys.json`` holds the entries alone (the development key's too),
    as FEEDBACKLOOP_API_KEYS_FILE takes them. Readable by the owner only, as the development
    key's file."""
    people = {p.subject: {"name": p.name, "roles": list(p.roles)} for p in PEOPLE}
    saved = [{"subject": s, **people[s], "key": key} for s, key in keys.items()]
    data_dir.mkdir(parents=True, exist_ok=True)
    for name, content in (
        (KEYS_FILE, saved),
        (API_KEYS_FILE, [e.model_dump(mode="json") for e in entries]),
    ):
        path = data_dir / name
        path.write_text(json.dumps(content, indent=2))
        path.chmod(0o600)


async def caught_up(runtime: Runtime) -> None:
    """Until every read model has applied the whole log: a step that reads one (a snapshot's
    task set, the night's plan, the digest) reads what the steps before it wrote."""
    names = list(runtime.readers)  # the read models this runtime runs, by their readers' names
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CATCH_UP_SECONDS
    while True:
        head = await asyncio.to_thread(runtime.store.recorder.max_notification_id)
        health = await runtime.health(only=names)
        if all(reader.position >= (head or 0) for reader in health):
            return
        if loop.time() > deadline:
            late = [r.name for r in health if r.position < (head or 0)]
            raise TimeoutError(f"read models not caught up: {', '.join(late)}")
        await asyncio.sleep(0.05)


def demo_given(runtime: Runtime, data_dir: Path) -> Given:
    """What the contexts are given for the demo: the night switched on (W80) with the stand-in
    agent's model, marked EU-routed in a catalogue of the demo's own (W98), and the demo's
    people's keys as the key store a night asks whether a confirmer may still run (W99)."""
    model = str(SCRIPT["modelName"])
    catalogue = data_dir / "demo-model-catalogue.toml"
    catalogue.parent.mkdir(parents=True, exist_ok=True)
    catalogue.write_text(f'[models."{model}"]\nresidency = "eu"\n')
    environ = {
        **os.environ,
        "FEEDBACKLOOP_EVALS_NIGHTLY_ENABLED": "true",
        "FEEDBACKLOOP_EVALS_NIGHTLY_MODEL": model,
        "FEEDBACKLOOP_EVALS_NIGHTLY_CONVERSATIONS_PER_CASE": "3",
        "FEEDBACKLOOP_MODEL_CATALOGUE": str(catalogue),
    }
    return scheduled.given(
        runtime.settings, runtime.store, runtime.bus, runtime.pool, runtime.keys,
        environ=environ,
    )  # fmt: skip


async def load(runtime: Runtime, data_dir: Path, advance: Callable[[str], None]) -> dict[str, str]:
    """Load the scenario into ``runtime``'s store; ``advance`` is told each step as it ends.
    Answers the people's keys, also written to ``data_dir``/demo-keys.json."""
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request hides the bar
    if await loaded_already(runtime):
        raise AlreadyLoaded()
    keys, entries = people_keys()
    runtime.keys = KeyRing([*runtime.keys.entries, *entries])
    clock = Clock()
    async with standin_agent() as agent_url:
        runtime.settings = runtime.settings.model_copy(
            update={"agent_url": agent_url, "agent_kind": "http", "agent_model": None}
        )
        runtime.start_projections()
        given = demo_given(runtime, data_dir)
        http = Http(runtime.bus, runtime.pool, runtime.keys, runtime.settings.read_wait_seconds,
                    runtime.positions, clock=clock, tokens=runtime.tokens)  # fmt: skip
        app, _ = http_app(http, given, runtime.readiness)
        scheduler = scheduled.new_scheduler(given, runtime.settings.scheduler_tick_seconds)

        async def carry_out(order: Order) -> bool:
            return await scheduler.carry_out(order, {})

        async def settled() -> None:
            await caught_up(runtime)

        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://demo") as client:
            demo = Demo(client, keys, clock, runtime.bus, carry_out, settled, {}, {})
            for title, step in STEPS:
                await step(demo)
                advance(title)
        await caught_up(runtime)
    save_keys(data_dir, keys, [*runtime.keys.entries])
    return keys
