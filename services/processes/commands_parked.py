"""``feedbackloop parked``: what a reader kept failing on — log events and inbound messages,
in one table — listed, shown, released to be tried again, or skipped for good."""

from typing import Annotated

import typer
from rich.console import Console

from services.processes.bootstrap import Runtime
from services.processes.lifetime import console, process_settings, run_operator

HELP = (
    "What a reader kept failing on, parked with its reason so that the reader goes on: "
    "log events (later events of the same aggregate wait behind them) and inbound messages "
    "(reader inbound). Fix the cause, then retry; or skip one for good."
)
READER = "The reader, e.g. relay, rm_inbox or inbound"


def parked_list(
    reader: Annotated[str | None, typer.Argument(help="Only this reader's")] = None,
) -> None:
    """Everything parked: reader, position, what (aggregate or message), attempts, reason."""
    from rich.table import Table

    from services.followers.parked import list_parked

    rows = run_operator(process_settings(), lambda rt: list_parked(rt.pool, reader))
    table = Table("reader", "position", "what", "attempts", "reason")
    for p in rows:
        reason = p.error + (" (released: retrying)" if p.released else "")
        table.add_row(p.reader, str(p.position), p.subject, str(p.attempts), reason)
    Console().print(table)
    console.print(f"{len(rows)} parked")


def parked_show(
    reader: Annotated[str, typer.Argument(help=READER)],
    position: Annotated[int, typer.Argument(help="Its position, as listed")],
) -> None:
    """Everything kept of one parked event or message (a message's head and headers too)."""
    from services.followers.parked import show_parked

    shown = run_operator(process_settings(), lambda rt: show_parked(rt.pool, reader, position))
    if shown is None:
        console.print(f"{reader} has nothing parked at position {position}")
        raise typer.Exit(1)
    for name, value in shown.items():
        console.print(f"{name}: {value!r}" if isinstance(value, bytes) else f"{name}: {value}")


def parked_retry(
    reader: Annotated[str, typer.Argument(help=READER)],
    position: Annotated[
        int | None, typer.Option(help="Only the aggregate (or message) parked at this position")
    ] = None,
) -> None:
    """Release parked events: the running reader applies them in order, per aggregate. A
    parked inbound message is sent again to its topic, when it was kept whole."""
    from services.followers.parked import list_parked, release
    from services.followers.parking import INBOUND
    from services.kafka.inbound.parking import send_again

    settings = process_settings()
    if reader != INBOUND:
        count = run_operator(settings, lambda rt: release(rt.pool, reader, position))
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

    outcomes = run_operator(settings, resend)
    for at, why_not in outcomes:
        console.print(f"{at}: " + ("sent again" if why_not is None else f"not sent: {why_not}"))
    if not outcomes or any(why_not is not None for _, why_not in outcomes):
        raise typer.Exit(1)


def parked_skip(
    reader: Annotated[str, typer.Argument(help=READER)],
    position: Annotated[int, typer.Argument(help="The parked event's position")],
) -> None:
    """Drop one parked event (or message) for good (that reader never applies it); the events
    parked behind it are released."""
    from services.followers.parked import skip

    if not run_operator(process_settings(), lambda rt: skip(rt.pool, reader, position)):
        console.print(f"{reader} has no parked event at position {position}")
        raise typer.Exit(1)
    console.print(f"skipped position {position} of {reader}")
