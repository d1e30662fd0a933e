"""``feedbackloop status``: where each reader of the log stands, as ``/readyz`` judges it."""

from typing import Annotated

import typer
from rich.console import Console

from services.followers.standing import ReaderHealth
from services.processes.bootstrap import Runtime
from services.processes.lifetime import console, process_settings, run_operator


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

    async def standing(runtime: Runtime) -> tuple[int, list[ReaderHealth]]:
        head = runtime.store.recorder.max_notification_id() or 0
        return head, await runtime.health(only=reader)

    head, report = run_operator(process_settings(), standing)
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
    if not all(r.ok for r in report):
        raise typer.Exit(1)
