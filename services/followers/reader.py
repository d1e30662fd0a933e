"""What a reader of the log is to the follower: its name, the topics it reads, and how it
applies a batch of positioned events (``Reader``); a reader whose apply is a hand-over and
then a wait says so (``Pipelined``)."""

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import asyncpg
from asyncpg.pool import PoolConnectionProxy

Connection = asyncpg.Connection | PoolConnectionProxy

PAGE_SIZE = 500  # events a page, unless the reader or the caller says otherwise


# Not frozen: a frozen dataclass sets each field through ``object.__setattr__``, and these are
# made for every event a reader reads. Slots: smaller and quicker to read; nothing ever
# assigns to them after they are made.
@dataclass(slots=True)
class Positioned:
    """A domain event and its place in the notification log."""

    position: int
    event: Any


class Reader(Protocol):
    """What a reader of the log tells the follower."""

    @property
    def name(self) -> str: ...

    @property
    def topics(self) -> Sequence[str]:
        """The event topics it reads; nothing else is fetched."""

    @property
    def transactional(self) -> bool:
        """Whether apply() runs in the position's transaction (read models do)."""

    # Optional: ``page_size``, the events a page it would rather have than ``PAGE_SIZE``;
    # ``select(notifications) -> notifications``, the ones of a page it reads (the others are
    # passed over undecoded: a share of the relay); ``holding(conn, say)``, an async context
    # manager of what it holds on the leader's connection while it leads, which may wait,
    # saying why (the relay's layout).

    async def open(self, say: Callable[[str], None]) -> None:
        """Acquire what apply() needs (a Kafka producer …); may wait, saying why."""

    async def close(self) -> None: ...

    async def apply(self, conn: Connection, batch: Sequence[Positioned]) -> None:
        """Apply the batch; raise to refuse it (the follower then tries event by event)."""


@runtime_checkable
class Pipelined(Protocol):
    """A non-transactional reader whose apply is a hand-over and then a wait (the relay: its
    messages handed to the producer, then Kafka's acknowledgements). The follower hands over
    the next page while the one before is unacknowledged, and moves the position past a page
    only once it and every page before it were acknowledged. It never hands over an aggregate
    whose events in the page before are still unacknowledged: should that page fail, what
    follows it never overtakes it, and each aggregate's events keep their order."""

    async def send(self, batch: Sequence[Positioned]) -> "asyncio.Future[None]":
        """Hand the batch over; the future is done when it was applied (or raises why not)."""
