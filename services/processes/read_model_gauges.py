"""The gauges of things that stand, recomputed from the read models (SPEC C49, C50).

``refresh`` reads each count through its read model's query (the proposals by tenant, kind and
state; the datasets with a published version by tenant and target; the scheduled units
failing now by job; the instance's parked events by reader, and whether it is degraded) and
sets the gauge's series all at once. A process that serves metrics
refreshes them every ``EVERY`` seconds (``keep_refreshed``), so whichever process raised or
decided a proposal, every scrape shows the read model's count, never a negative one.

Tenant-owned label values (tenant ids, targets) are shown only where the operator asked
(``tenant_label``); otherwise the counts of every tenant add up in one series.
"""

import asyncio
import contextlib
import logging
from collections import Counter

import asyncpg

from projections.datasets import count_published_datasets
from projections.learning_proposals import count_proposals
from services.followers.parking import parked_by_reader
from services.observing.metrics import (
    DATASETS,
    DEGRADED,
    INSTANCE_PARKED,
    LEARNING_PROPOSALS,
    SCHEDULED_FAILING,
    tenant_label,
)
from services.processes.health import incidents_of
from services.scheduling.failures import failing_by_job

log = logging.getLogger(__name__)

EVERY = 15.0  # seconds: about a scrape interval


async def refresh(pool: asyncpg.Pool) -> None:
    """Every read-model gauge, from its read model now."""
    proposals: Counter[tuple[str, ...]] = Counter()
    for tenant, kind, state, n in await count_proposals(pool):
        proposals[(tenant_label(tenant), kind, state)] += n
    datasets: Counter[tuple[str, ...]] = Counter()
    for tenant, target, n in await count_published_datasets(pool):
        datasets[(tenant_label(tenant), tenant_label(target))] += n
    failing = await failing_by_job(pool)
    parked = await parked_by_reader(pool)
    LEARNING_PROPOSALS.set_all(proposals)
    DATASETS.set_all(datasets)
    SCHEDULED_FAILING.set_all({(f.job,): float(f.units) for f in failing})
    INSTANCE_PARKED.set_all({(reader,): float(n) for reader, n in parked.items()})
    DEGRADED.set_all({(): 1.0 if incidents_of(parked, failing) else 0.0})


async def keep_refreshed(pool: asyncpg.Pool, stop: asyncio.Event, every: float = EVERY) -> None:
    """Refresh until stopped. A refresh that fails keeps the last counts and is logged: a
    missed refresh is only a missed one (the supervisor restarts what raises)."""
    while not stop.is_set():
        try:
            await refresh(pool)
        except Exception:
            log.warning("metrics: the read-model gauges were not refreshed", exc_info=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=every)
