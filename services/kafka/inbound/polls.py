"""Two polls in flight, settled in order.

While one poll's transaction waits in PostgreSQL, the next is read, its receipts looked up and
handed to the command bus, which decides it meanwhile (``services.bus.command_bus``); it is
appended only after the one before, and not at all if that one failed whole. A poll's retries
and its offset commit wait for the poll before to be settled, so offsets and positions never
move past a poll that failed. Deciding early sees the store as it was before the poll in
flight, as a poll's own commands already see it: repeats across the two are caught by their
receipts (a conflict, then one by one).
"""

import asyncio


class Poll:
    """One poll being settled, and the poll before it. A poll's commands go to the command bus
    while the poll before is still being appended, but never ahead of it: its slices enter the
    bus's queue after every slice of the poll before did (the bus appends in that order, and
    does not try a batch after one that failed whole); a failed message is retried, and the
    poll's offsets committed, only once the poll before is settled."""

    def __init__(self, before: "Poll | None", slices: int) -> None:
        self.before = before
        self.task: asyncio.Task[None] | None = None
        self.queued = asyncio.Event()  # every slice's first attempt is in the bus's queue
        self._waiting = slices

    def slice(self) -> "Slice":
        return Slice(self)

    def slice_queued(self) -> None:
        self._waiting -= 1
        if self._waiting <= 0:
            self.queued.set()

    @property
    def done(self) -> bool:
        return self.task is not None and self.task.done()

    async def settled(self) -> None:
        """Until this poll is settled and committed; raises what it raised."""
        assert self.task is not None
        await self.task

    async def turn(self) -> None:
        """Until the poll before is in the bus's queue (or gone)."""
        if self.before is not None:
            await self.before.queued.wait()

    async def before_settled(self) -> None:
        """Until the poll before is settled; its failure is its own (``raise_before``)."""
        if self.before is not None and self.before.task is not None:
            await asyncio.wait({self.before.task})

    async def raise_before(self) -> None:
        """The poll before settled and committed; raises what it raised."""
        if self.before is not None and self.before.task is not None:
            await self.before.task


class Slice:
    """One partition's slice of a poll, telling its poll once that it is in the queue."""

    def __init__(self, poll: Poll) -> None:
        self.poll, self._told = poll, False

    def queued(self) -> None:
        if not self._told:
            self._told = True
            self.poll.slice_queued()
