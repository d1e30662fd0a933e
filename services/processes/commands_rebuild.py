"""``feedbackloop rebuild``: read models built afresh beside the live ones, with a progress bar
each, then swapped in."""

import os
import time
from typing import Annotated

import typer
from rich.progress import MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from services.processes import roles
from services.processes.bootstrap import Runtime
from services.processes.contexts import read_models
from services.processes.lifetime import console, process_settings, run_command

# From this many events a rebuild loads feedback in worker processes, one per core: each
# takes a second or so to start, which a shorter log does not win back.
PROCESSES_FROM = 100_000


def rebuild_processes(head: int) -> int:
    return (os.cpu_count() or 1) if head >= PROCESSES_FROM else 1


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
    events, so nothing is lost or applied twice. A read model that parked any event is not
    swapped in: each is named with what it parked, and the command exits 1.
    """
    from services.projecting.rebuild import rebuild_many
    from services.projecting.swapping import RebuildParked, said

    settings = process_settings()
    known = {p.name: p for p in read_models()}
    if unknown := [n for n in names or () if n not in known]:
        raise typer.BadParameter(f"unknown read model {unknown[0]!r}; known: {', '.join(known)}")
    projections = [known[n] for n in names] if names else list(known.values())

    async def work(runtime: Runtime) -> None:
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
            try:
                schemas = await rebuild_many(
                    runtime.store,
                    runtime.pool,
                    projections,
                    swap=swap,
                    progress=moved,
                    processes=processes or rebuild_processes(head),
                    database_url=runtime.database_url,
                )
            except RebuildParked as parked:  # decisions D143: parked anything, not swapped
                for schema, why in parked.parked.items():
                    console.print(said((schema, why)), soft_wrap=True)
                raise typer.Exit(1) from None
            seconds = time.perf_counter() - started
        for projection, schema in zip(projections, schemas, strict=True):
            console.print(f"{projection.name}: rebuilt up to {head} in schema {schema}")
        console.print(
            f"rebuilt {len(projections)} read models over {head} events in {seconds:.3f} s "
            f"({head / seconds:,.0f} events/s)"
        )

    run_command(settings, roles.REBUILD, work)
