"""``feedbackloop scheduler``: the clock as a process of its own, or one tick or some orders
carried out now, like an operator's command."""

from datetime import UTC, datetime
from typing import Annotated

import typer

from services.processes import roles
from services.processes.bootstrap import Runtime
from services.processes.lifetime import (
    Stop,
    console,
    nothing_more,
    process_settings,
    run_command,
    run_readers,
)
from services.scheduling.due import parse_order


def scheduler(
    once: Annotated[
        bool, typer.Option(help="Tick once (catching up what fell due), then exit")
    ] = False,
    order: Annotated[
        list[str] | None,
        typer.Option(
            help="Carry out this order now, then exit: night/2026-11-29, digest/2026-W48, "
            "proposals/2026-11-30, retention/2026-11-30 or closures/2026-11-30T14 (appraise "
            "the closed tasks waiting) (repeatable). Done already: nothing happens (ids are "
            "deterministic)."
        ),
    ] = None,
) -> None:
    """Turn the clock into the nightly eval runs, the weekly digests, the daily learning
    proposals and, at every tick, the appraisal of closed tasks (SPEC W79, W105, C42, M45).

    Ticks every FEEDBACKLOOP_SCHEDULER_TICK_SECONDS (an hour) and orders what fell due since
    the previous tick, catching up a downtime in order. Several schedulers may run: each night
    and each digest happens once. Also runs inside `feedbackloop serve`.
    """
    settings = process_settings()
    now = datetime.now(UTC)
    try:
        orders = [parse_order(text, now) for text in order or []]
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--order") from None

    if not (once or orders):

        async def begin(runtime: Runtime) -> Stop:
            runtime.start_scheduler()
            return nothing_more

        run_readers(settings, roles.SCHEDULER, begin)
        return

    async def carry_out(runtime: Runtime) -> None:
        # Like an operator's command: it says at once when PostgreSQL is away, no wait.
        scheduler = runtime.new_scheduler()
        for one in orders:
            if not await scheduler.carry_out(one, {}):
                raise typer.Exit(1)
        if once:
            done = await scheduler.tick()
            console.print(f"ordered: {', '.join(o.name for o in done) or 'nothing was due'}")

    run_command(settings, roles.SCHEDULER, carry_out)
