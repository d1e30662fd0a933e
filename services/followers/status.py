"""What this process knows of one of its readers (``ReaderStatus``), for ``/readyz``, the
heartbeat and the metrics of readers (``measure``)."""

import asyncio
import logging
import time
from dataclasses import dataclass, field

from services.observing import metrics

log = logging.getLogger(__name__)


@dataclass
class ReaderStatus:
    """What this process knows of one of its readers, for /readyz and metrics."""

    name: str
    state: str = "starting"
    position: int = 0
    head: int = 0
    parked: int = 0
    applied: int = 0  # events applied since this process started
    said_at: float = field(default_factory=time.monotonic)
    changed: asyncio.Event = field(default_factory=asyncio.Event)  # the heartbeat tells at once

    def say(self, state: str) -> None:
        if state != self.state:
            log.info("%s: %s", self.name, state)
            self.changed.set()
        self.state = state
        self.said_at = time.monotonic()

    @property
    def lag(self) -> int:
        return max(self.head - self.position, 0)


def measure(status: ReaderStatus) -> None:
    """The reader's position, lag and parked events, as gauges."""
    metrics.READER_POSITION.labels(status.name).set(status.position)
    metrics.READER_LAG.labels(status.name).set(status.lag)
    metrics.READER_PARKED.labels(status.name).set(status.parked)
