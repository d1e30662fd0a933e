"""A page of the log read and decoded for a reader: every event decoded ahead of its turn,
or why it could not be (a failure is the event's own, raised when its turn comes and then
parked like any other). A sealed field is opened where the reader reads it (decisions D290):
a box that fails authentication fails the reader's apply, and is parked as any failure."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from eventsourcing.persistence import Notification

from services.followers.reader import Positioned
from services.store.event_store import EventStore
from services.store.lazy_opening import decode_lazily
from services.store.log_reading import read_log


def decode(store: EventStore, notification: Notification) -> Positioned:
    return Positioned(notification.id, decode_lazily(store.mapper, notification))


@dataclass(slots=True)
class Decoded:
    """An event decoded ahead of its turn, or why it could not be."""

    positioned: Positioned | None
    error: Exception | None = None

    @classmethod
    def of(cls, store: EventStore, notification: Notification) -> "Decoded":
        try:
            return cls(decode(store, notification))
        except Exception as error:
            return cls(None, error)

    def event(self) -> Positioned:
        if self.error is not None:
            raise self.error
        assert self.positioned is not None
        return self.positioned


@dataclass(frozen=True)
class Page:
    """A page of the log: what it brings a reader to, its notifications and their events."""

    upto: int
    notifications: list[Notification]
    decoded: list[Decoded]
    full: bool  # as many were read as asked for: the log goes on past ``upto``


Select = Callable[[Sequence[Notification]], list[Notification]]


def read_page(
    store: EventStore, after: int, limit: int, topics: list[str], select: Select | None = None
) -> Page:
    """The page of these topics after ``after``, every event decoded (or why it could not be);
    with ``select``, only the notifications it keeps (the page still brings the reader to
    ``upto``). Blocking: callers run it in a thread, reading the next page while they apply
    this one."""
    upto, notifications = read_log(store, after, limit, topics)
    full = len(notifications) == limit
    if select is not None:
        notifications = select(notifications)
    return Page(upto, notifications, [Decoded.of(store, n) for n in notifications], full)
