"""``feedbackloop queues progress``: each review queue of a tenant and how it stands now, for
a script or a morning report (decisions D164). Reads the ``review_queues`` read model with the
database's credentials; decides nothing."""

from datetime import UTC, datetime
from typing import Annotated, Any

import typer

from contracts.errors import Refused
from projections.review_queues import list_queues, queue_progress
from services.processes.bootstrap import Runtime
from services.processes.lifetime import console, process_settings, run_operator
from services.queues.api import day_and_week, zone_of

HELP = (
    "The review queues of a tenant: each queue's open, claimed and done counts and its "
    "oldest waiting report, as GET /factory/queues answers them."
)


def queues_progress(
    tenant: Annotated[str, typer.Option(help="The tenant whose queues they are")],
    time_zone: Annotated[
        str, typer.Option(help="Whose today and week the done counts are (IANA name)")
    ] = "UTC",
) -> None:
    """Each queue by name: open, claimed, done today, done this week, oldest waiting."""
    try:
        zone = zone_of(time_zone)
    except Refused as refused:
        raise typer.BadParameter(refused.message, param_hint="--time-zone") from None

    async def work(rt: Runtime) -> list[dict[str, Any]]:
        now = datetime.now(UTC)
        day, week = day_and_week(now, zone)
        rows = []
        for found in await list_queues(rt.pool, tenant):
            progress = await queue_progress(
                rt.pool, tenant, found["queue"], now=now, day_start=day, week_start=week
            )
            rows.append({**found, "progress": progress})
        return rows

    rows = run_operator(process_settings(), work)
    for row in rows:
        p = row["progress"]
        if p is None:
            continue
        oldest = p.oldest_waiting.isoformat() if p.oldest_waiting else "-"
        console.print(
            f"{row['queue']}\topen {p.open}\tclaimed {p.claimed}\tdone today {p.done_today}"
            f"\tdone this week {p.done_this_week}\toldest {oldest}"
        )
    console.print(f"{len(rows)} queues")
