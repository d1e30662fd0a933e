"""The processes of readers, each runnable apart: ``projector``, ``relay``, ``handover`` and
``inbound``. Each starts its readers on the runtime of its role and runs until signalled
(``services.processes.lifetime.run_readers``)."""

from typing import Annotated

import typer

from services.kafka.shares import Share
from services.processes import roles
from services.processes.bootstrap import Runtime
from services.processes.lifetime import Stop, nothing_more, process_settings, run_readers


def projector(
    only: Annotated[
        list[str] | None, typer.Option(help="Run only these read models (repeatable)")
    ] = None,
) -> None:
    """Keep the read models up to date from the event store (one runner per read model)."""

    async def begin(runtime: Runtime) -> Stop:
        runtime.start_projections(only)
        return nothing_more

    role = roles.projector_with(len(set(only))) if only else roles.PROJECTOR
    run_readers(process_settings(), role, begin)


SHARE_HELP = (
    "Publish only share I of N of the aggregates, e.g. 1/2 in one process and 2/2 in another "
    "(FEEDBACKLOOP_RELAY_SHARE; default 1/1, the whole log). Every share of one N must run; "
    "a relay of another N publishing meanwhile makes this one wait (docs/kafka.md)."
)


def relay(
    share: Annotated[str | None, typer.Option(help=SHARE_HELP, metavar="I/N")] = None,
) -> None:
    """Publish the store's public events to Kafka (one active relay per share; others of the
    same share stand by)."""

    async def begin(runtime: Runtime) -> Stop | None:
        return None if await runtime.start_relay() is None else nothing_more

    settings = process_settings()
    if share is not None:
        try:
            settings = settings.model_copy(update={"relay_share": str(Share.parse(share))})
        except ValueError as error:
            raise typer.BadParameter(str(error), param_hint="--share") from error
    run_readers(settings, roles.RELAY, begin)


def handover() -> None:
    """Deliver hand-overs to the engineering webhook (FEEDBACKLOOP_HANDOVER_WEBHOOK_URL), and
    take the weekly digest's posts into the agents' standing issues (FEEDBACKLOOP_TRACKERS,
    docs/digests.md)."""

    async def begin(runtime: Runtime) -> Stop | None:
        runtime.start_handover_webhook()
        runtime.start_agent_webhooks()  # agents' webhooks are the tenants' own: always on
        runtime.start_intake()
        return nothing_more

    run_readers(process_settings(), roles.HANDOVER, begin)


def inbound() -> None:
    """Consume commands sent by other services on Kafka (scale out with partitions)."""

    async def begin(runtime: Runtime) -> Stop | None:
        consumer = await runtime.start_inbound()
        # Stopped before the runtime closes: the poll in hand is settled first.
        return None if consumer is None else consumer.stop

    run_readers(process_settings(), roles.INBOUND, begin)
