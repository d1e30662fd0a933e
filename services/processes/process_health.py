"""How the readers a process knows stand, from PostgreSQL, and this process's own view of
whether their tasks still run."""

import asyncio

import asyncpg

from services.followers.supervisor import Supervisor
from services.processes.health import ReaderHealth, inbound_health, readers_health
from services.processes.settings import Settings
from services.scheduling.scheduler import NAME as SCHEDULER
from services.scheduling.scheduler import scheduler_health
from services.store.event_store import EventStore

INBOUND = "inbound"  # the inbound consumer's name among the readers


async def process_health(
    settings: Settings,
    store: EventStore,
    pool: asyncpg.Pool,
    supervisor: Supervisor,
    only: list[str] | None = None,
) -> list[ReaderHealth]:
    """How each reader stands (all known ones, or ``only`` these)."""
    head = await asyncio.to_thread(store.recorder.max_notification_id) or 0
    max_lag = settings.reader_max_lag
    max_silence = settings.reader_max_silence_seconds
    of_log = None if only is None else [n for n in only if n not in (INBOUND, SCHEDULER)]
    report = await readers_health(pool, head, only=of_log, max_lag=max_lag, max_silence=max_silence)
    if settings.kafka_bootstrap_servers and (only is None or INBOUND in only):
        report.append(
            await inbound_health(
                pool, settings.inbound_group_id, max_lag=max_lag, max_silence=max_silence
            )
        )
    if only is None or SCHEDULER in only:
        scheduler = await scheduler_health(pool, max_silence=max_silence)
        if scheduler is not None:
            report.append(  # the scheduler's lag is its orders pending
                ReaderHealth(
                    SCHEDULER,
                    0,
                    scheduler.pending,
                    0,
                    scheduler.state,
                    scheduler.seen_seconds_ago,
                    scheduler.problems,
                    scheduler.incidents,
                )
            )
        elif only is not None:
            report.append(
                ReaderHealth(SCHEDULER, 0, 0, 0, "never started", None, ["never started"])
            )
    for reader in report:  # this process knows better whether its own tasks still run
        task = supervisor.tasks.get(reader.name)
        if task is not None and not task.alive:
            reader.problems.insert(0, "its task has ended")
    return report
