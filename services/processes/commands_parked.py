"""``feedbackloop parked``: the events a reader kept failing on, listed, released to be tried
again, or skipped for good."""

from typing import Annotated

import typer
from rich.console import Console

from services.processes.lifetime import console, process_settings, run_operator

HELP = (
    "Events a reader kept failing on, parked with their reason so that the reader goes "
    "on. Later events of the same aggregate wait behind them. Fix the cause, then retry; or "
    "skip one for good."
)


def parked_list(
    reader: Annotated[str | None, typer.Argument(help="Only this reader's")] = None,
) -> None:
    """Every parked event: reader, position, aggregate, attempts and the reason."""
    from rich.table import Table

    from services.followers.parked import list_parked

    rows = run_operator(process_settings(), lambda rt: list_parked(rt.pool, reader))
    table = Table("reader", "position", "aggregate", "version", "attempts", "reason")
    for p in rows:
        reason = p.error + (" (released: retrying)" if p.released else "")
        table.add_row(
            p.reader,
            str(p.position),
            str(p.originator_id),
            str(p.originator_version),
            str(p.attempts),
            reason,
        )
    Console().print(table)
    console.print(f"{len(rows)} parked")


def parked_retry(
    reader: Annotated[str, typer.Argument(help="The reader, e.g. relay or rm_inbox")],
    position: Annotated[
        int | None, typer.Option(help="Only the aggregate parked at this position")
    ] = None,
) -> None:
    """Release parked events: the running reader applies them in order, per aggregate."""
    from services.followers.parked import release

    count = run_operator(process_settings(), lambda rt: release(rt.pool, reader, position))
    console.print(f"released {count} parked events of {reader}; see: feedbackloop parked list")
    if not count:
        raise typer.Exit(1)


def parked_skip(
    reader: Annotated[str, typer.Argument(help="The reader, e.g. relay or rm_inbox")],
    position: Annotated[int, typer.Argument(help="The parked event's position")],
) -> None:
    """Drop one parked event for good (that reader never applies it); the events parked
    behind it are released."""
    from services.followers.parked import skip

    if not run_operator(process_settings(), lambda rt: skip(rt.pool, reader, position)):
        console.print(f"{reader} has no parked event at position {position}")
        raise typer.Exit(1)
    console.print(f"skipped position {position} of {reader}")
