"""The supervised tasks that keep what a process holds in memory current: the read-model
gauges on its metrics port (SPEC C49, C50) and the key ring at the store's keys and grants
(decisions D29)."""

import asyncio
from collections.abc import Callable

import asyncpg

from services.edge.auth import KeyRing
from services.edge.key_refresh import KeyRefresher
from services.followers.supervisor import Supervisor
from services.processes.metrics_port import Served
from services.processes.read_model_gauges import keep_refreshed

GAUGES = "metrics-gauges"  # the supervised task that refreshes the read-model gauges
KEYS = "keys"  # the supervised task that keeps the key ring at the store's keys and grants


class Refreshers:
    """The Runtime's part that keeps its gauges and keys current
    (``services.processes.bootstrap``)."""

    pool: asyncpg.Pool
    keys: KeyRing
    stop: asyncio.Event
    supervisor: Supervisor
    unserve_metrics: Callable[[], None] | None
    served_metrics_port: int | None
    refresher: KeyRefresher | None

    def metrics_served(self, served: Served | None) -> int | None:
        """Metrics are served (``serve_metrics``, before the process connected, or None when
        off): keep the read-model gauges refreshed there, and stop serving when closed. The
        counts of things that stand are read from the read models, whichever process changed
        them (SPEC C49, C50). Answers the port."""
        if served is None:
            return None
        self.served_metrics_port, self.unserve_metrics = served
        self.supervisor.start(GAUGES, lambda: keep_refreshed(self.pool, self.stop))
        return self.served_metrics_port

    async def start_key_refresher(self) -> KeyRefresher:
        """The store's keys and grants in ``keys`` before the first request, and again
        whenever they change (decisions D29)."""
        refresher = self.key_refresher()
        await refresher.refresh()
        self.supervisor.start(KEYS, lambda: refresher.run(self.stop))
        return refresher

    def key_refresher(self) -> KeyRefresher:
        if self.refresher is None:
            self.refresher = KeyRefresher(self.pool, self.keys)
        return self.refresher
