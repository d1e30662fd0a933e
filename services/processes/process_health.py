"""How the readers a process knows stand, from PostgreSQL, and this process's own view of
whether their tasks still run."""

import asyncio

import asyncpg

from services.followers.parking import INBOUND as INBOUND
from services.followers.standing import ReaderHealth
from services.followers.supervisor import Supervisor
from services.processes.settings import Settings
from services.scheduling.standing import instance_standing
from services.store.event_store import EventStore


async def process_health(
    settings: Settings,
    store: EventStore,
    pool: asyncpg.Pool,
    supervisor: Supervisor,
    only: list[str] | None = None,
) -> list[ReaderHealth]:
    """How each reader stands (all known ones, or ``only`` these)."""
    head = await asyncio.to_thread(store.recorder.max_notification_id) or 0
    report = await instance_standing(
        pool,
        only=only,
        max_lag=settings.reader_max_lag,
        max_silence=settings.reader_max_silence_seconds,
        inbound_group=settings.inbound_group_id if settings.kafka_bootstrap_servers else None,
        head=head,
    )
    for reader in report:  # this process knows better whether its own tasks still run
        task = supervisor.tasks.get(reader.name)
        if task is not None and not task.alive:
            reader.problems.insert(0, "its task has ended")
    return report
