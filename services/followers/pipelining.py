"""The step of a pipelined reader (``services.followers.reader.Pipelined``, the relay): this
page handed over, then the page before it settled (its acknowledgement, then the position),
so building one page overlaps waiting for the other."""

import asyncio
from dataclasses import dataclass
from uuid import UUID

from eventsourcing.persistence import Notification

from services.followers.positions import read_position
from services.followers.reader import Connection, Pipelined, Positioned
from services.followers.status import measure
from services.followers.stepping import Stepper
from services.followers.transient import is_transient


@dataclass(frozen=True)
class Sent:
    """A page handed over to a pipelined reader, its acknowledgement still to come."""

    after: int  # the position it was read after
    upto: int
    notifications: list[Notification]
    ready: list[Positioned]
    behind: list[Notification]
    acknowledged: "asyncio.Future[None]"
    aggregates: set[UUID | str]  # those of ``ready``: the ones on their way


class PipelinedStepper(Stepper):
    """``Stepper`` for a pipelined reader: at most one page on its way at a time."""

    _sent: Sent | None = None

    async def step(self, conn: Connection) -> bool:
        position = await read_position(conn, self.reader.name)
        if self._sent is not None and self._sent.after != position:
            await self.settle(conn)  # the position moved under it: settle it first
            position = await read_position(conn, self.reader.name)
        start = position if self._sent is None else self._sent.upto
        page = await self.page(start)
        upto, notifications = page.upto, page.notifications
        self.status.head = max(upto, self.status.head)
        if upto <= start:
            if self._sent is None:
                self.status.position = position
                measure(self.status)
                return False
            await self.settle(conn)
            return True
        self.read_ahead(page)
        aggregates = {n.originator_id for n in notifications}
        if self._sent is not None and not self._sent.aggregates.isdisjoint(aggregates):
            # An aggregate of this page is on its way: settle it first, and only then ask
            # what is parked (its failure may park the aggregate, and this page behind it).
            await self.settle(conn)
        parked = await self.parked(conn)
        try:
            ready, behind = self.ready(page, parked)
            acknowledged = await self.hand_over(ready)
        except Exception as error:
            if is_transient(error):
                raise
            await self.settle(conn)  # the pages before, in order
            await self.one_by_one(conn, notifications, upto, parked, error)
            self.status.position = upto
            measure(self.status)
            return True
        if behind:  # else every event of the page is on its way: the set made above
            aggregates = {p.event.originator_id for p in ready}
        before, self._sent = (
            self._sent,
            Sent(start, upto, notifications, ready, behind, acknowledged, aggregates),
        )
        if before is not None:
            await self.settled(conn, before)
        return True

    async def hand_over(self, ready: list[Positioned]) -> "asyncio.Future[None]":
        if not ready:
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            done.set_result(None)
            return done
        assert isinstance(self.reader, Pipelined)
        return await self.reader.send(ready)

    async def settle(self, conn: Connection) -> None:
        """Settle the page on its way, if any (``settled``)."""
        sent, self._sent = self._sent, None
        if sent is not None:
            await self.settled(conn, sent)

    def forget_unsettled(self) -> None:
        """Its position was not moved: a leader sends it again."""
        self._sent = None

    async def settled(self, conn: Connection, sent: Sent) -> None:
        """Wait for a handed-over page's acknowledgement and move the position past it; if it
        failed, apply it one by one (parking what keeps failing), as a failed batch is."""
        try:
            await sent.acknowledged
            await self.advance(conn, sent.ready, sent.upto, park_behind=sent.behind)
        except Exception as error:
            if is_transient(error):
                raise
            parked = await self.parked(conn)
            await self.one_by_one(conn, sent.notifications, sent.upto, parked, error)
        self.status.position = sent.upto
        measure(self.status)
