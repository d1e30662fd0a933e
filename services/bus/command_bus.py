"""The one command-handling path: HTTP and Kafka entry points both submit here.

Commands that arrive together are decided one after the other and appended in ONE transaction
(group commit): the store appends many more events a second in batches than in transactions of
one event each. A batch that meets a concurrency conflict is redone command by command, each
reloading and deciding again, so one conflict never fails its neighbours
(``services.bus.committing``).

Two ways in:

- ``execute(issued)``: one command (HTTP, the hand-over webhook). Its tracking record, if any,
  commits with its events only when it succeeds, so a failed one is tried again.
- ``execute_batch(commands, tracking)``: a poll's commands from one Kafka partition, decided
  together and appended in the same transaction as ONE tracking record, the partition's
  position. Refused commands count as settled (the consumer dead-letters them).

A bus batch holds at most one tracked unit, because the library writes one tracking record per
transaction. A command with an ``identity`` is applied at most once: its ``Receipt`` is created
with its events (``services.bus.receipts``). ``Receipt`` is defined here because an
aggregate's module path is the topic stored with every one of its events.
"""

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from eventsourcing.domain import Aggregate
from eventsourcing.persistence import IntegrityError, Tracking
from eventsourcing.utils import get_topic
from pydantic import BaseModel

from services.bus.asking import bus_decided, door_now
from services.bus.audit import AuditTrail
from services.bus.committing import Committing
from services.bus.deciding import Deciding
from services.bus.decisions import Creates, Handler, Outcome, Replay, Result
from services.bus.issued import Issued, traced
from services.bus.receipts import receipt_id
from services.bus.units import NotTried, Prepared, Unit, settle
from services.observing.metrics import BUS_SECONDS
from services.observing.tracing import (
    current_traceparent,
    link_spans,
    span_linkers,
)
from services.store.event_store import EventStore
from services.store.fast_frozen import frozen_from_fields
from services.store.fast_loop_store import LoopStore

log = logging.getLogger(__name__)
QUEUED, DECIDE, APPEND = (BUS_SECONDS.labels(stage) for stage in ("queued", "decide", "append"))


# Here, not in services.bus.receipts: an aggregate's module path is the topic stored with
# every one of its events, and receipts stored already name this module.
class Receipt(Aggregate):
    """That the command with this identity was applied; created with the command's events."""

    class Recorded(Aggregate.Created):
        identity: str
        command: str
        digest: str | None = None  # receipts recorded before digests were kept have none

    def __init__(self, identity: str, command: str, digest: str | None = None) -> None:
        self.identity = identity
        self.command = command
        self.digest = digest

    @classmethod
    def record(
        cls, identity: str, command: str, at: datetime, digest: str | None = None
    ) -> "Receipt":
        return cls._create(
            cls.Recorded,
            id=receipt_id(identity),
            timestamp=at,
            identity=identity,
            command=command,
            digest=digest,
        )

    @classmethod
    def recorded(
        cls, identity: str, command: str, at: datetime, digest: str | None = None
    ) -> "Receipt.Recorded":
        """The event ``record`` would create, without building the aggregate (the library's
        ``mutate``): the bus only appends it. The same event, field for field and in the
        event's order, a UUID id (``frozen_from_fields``)."""
        return frozen_from_fields(
            cls.Recorded,
            {
                "originator_id": receipt_id(identity),
                "originator_version": 1,
                "timestamp": at,
                "originator_topic": RECEIPT_TOPIC,
                "identity": identity,
                "command": command,
                "digest": digest,
            },
        )


RECEIPT_TOPIC = get_topic(Receipt)


class CommandBus:
    def __init__(
        self,
        store: EventStore,
        handlers: dict[type[BaseModel], Handler],
        max_batch: int = 100,
        creates: dict[type[BaseModel], Creates] | None = None,
        replays: dict[type[BaseModel], Replay] | None = None,
        loop_store: LoopStore | None = None,
        alone: frozenset[type[BaseModel]] = frozenset(),
        audit: AuditTrail | None = None,
    ) -> None:
        """``loop_store``: PostgreSQL through asyncpg, for what the bus can ask of it on the
        event loop (``LoopStore``): which aggregates exist, and the append of a batch with no
        tracking record. ``alone``: commands whose handler reads nothing from the store when
        the aggregate it creates is new (``Issued.new``); a batch of only such, all new, is
        decided on the event loop too, with no thread at all. ``audit``: where each
        command's outcome is recorded once its caller has it (``services.bus.audit``)."""
        self.audit = audit
        self._loop_store = loop_store
        self._handlers = handlers
        self._deciding = Deciding(
            store, handlers, creates or {}, replays or {}, alone, Receipt.recorded
        )
        self._committing = Committing(store, self._deciding)
        self._max_batch = max_batch
        self._queue: asyncio.Queue[Unit] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._held: Unit | None = None

    @property
    def transactions(self) -> int:
        """How many appends it took (group commit makes it fewer than the commands)."""
        return self._committing.transactions

    def handles(self, command: type[BaseModel]) -> bool:
        return command in self._handlers

    async def execute(self, issued: Issued) -> Outcome:
        """Decide and append one command; raises its DomainError, if any, to the caller."""
        [result] = await self._submit([issued], issued.tracking, batch=False)
        if isinstance(result, BaseException):
            raise result
        return result

    async def execute_batch(
        self, commands: Sequence[Issued], tracking: Tracking | None
    ) -> list[Result]:
        """Decide the commands together and append their events and ``tracking`` in one
        transaction; answers each command's Outcome or error, in order."""
        return await self.submit_batch(commands, tracking)

    def submit_batch(
        self, commands: Sequence[Issued], tracking: Tracking | None
    ) -> "asyncio.Future[list[Result]]":
        """``execute_batch``, queued at once: a caller learns that its batch is taken in
        turn (batches append in the order they were submitted) before it awaits the answer."""
        return self._submit(list(commands), tracking, batch=True)

    def _submit(
        self, commands: list[Issued], tracking: Tracking | None, *, batch: bool
    ) -> "asyncio.Future[list[Result]]":
        for issued in commands:
            if type(issued.command) not in self._handlers:
                raise TypeError(f"no handler for {type(issued.command).__name__}")
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._work(), name="command-bus")
        if (trace := current_traceparent.get()) is not None:
            commands = [c if c.trace else replace(c, trace=trace) for c in commands]
        commands = [traced(c) for c in commands]
        if span_linkers:
            link_spans([c.command for c in commands])
        if (door := door_now()) is not None:
            bus_decided()  # the request's rows are the bus's (decisions D110)
            commands = [c if c.door else replace(c, door=door) for c in commands]
        future: asyncio.Future[list[Result]] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(Unit(commands, tracking, batch, future))
        return future

    async def aclose(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)
        if self.audit is not None:
            await self.audit.aclose()

    async def flush_audit(self) -> None:
        """Write this process's audit rows now (a reader of the audit asks first)."""
        if self.audit is not None:
            await self.audit.flush()

    def _audited(self, batch: list[Unit], prepared: Prepared | None = None) -> None:
        if self.audit is not None:
            self.audit.record(batch, () if prepared is None else prepared.decided)

    async def _work(self) -> None:
        """A batch is decided (and its events written as stored events) while the
        batch before it waits in PostgreSQL for its append; batches still append one after
        the other, in the order they were taken. A batch decided that way sees the store as
        it was before the batch in flight, as commands within one batch already do: a stale
        decision about an existing aggregate fails its append (a version conflict) and is
        redone, a created id taken meanwhile conflicts alike. If the batch before was redone
        command by command, this one is decided again once it is stored; if it failed whole,
        this one is not tried at all (``NotTried``), so that a later batch never commits past
        a failed one (an inbound partition's position, its events' order)."""
        appending: asyncio.Task[str] | None = None
        batch: list[Unit] = []
        try:
            while True:
                batch = await self._next_batch()
                prepared = await self._prepared(batch)
                if appending is not None:
                    before = await appending
                    appending = None
                    if before == "failed":
                        error = NotTried("not tried: the batch before it failed")
                        settle(batch, error)
                        self._audited(batch)
                        continue
                    if before == "redone" and not isinstance(prepared, BaseException):
                        for unit in batch:
                            unit.results = [None] * len(unit.commands)
                        prepared = await self._prepared(batch)
                if isinstance(prepared, BaseException):
                    settle(batch, prepared)
                    self._audited(batch)
                    continue
                appending = asyncio.create_task(self._stored(batch, prepared))
        except asyncio.CancelledError:
            for unit in batch:  # taken, perhaps decided, not appended
                unit.future.cancel()
            if appending is not None:
                appending.cancel()
                await asyncio.gather(appending, return_exceptions=True)
            raise

    async def _prepared(self, batch: list[Unit]) -> Prepared | BaseException:
        started = time.monotonic()
        try:
            if self._loop_store is None:
                prepared = await asyncio.to_thread(self._deciding.prepare, batch)
            else:
                creating = self._deciding.creating(batch)
                new = self._deciding.new(
                    creating, await self._loop_store.existing(creating.values())
                )
                if self._deciding.alone_and_new(batch, new):
                    prepared = self._deciding.prepare(batch, new)
                else:
                    prepared = await asyncio.to_thread(self._deciding.prepare, batch, new)
            DECIDE.observe(time.monotonic() - started)
            return prepared
        except asyncio.CancelledError:
            for unit in batch:
                unit.future.cancel()
            raise
        except Exception as error:  # a store outage fails the batch, not the bus
            return error

    async def _stored(self, batch: list[Unit], prepared: Prepared) -> str:
        """Append a prepared batch and answer its callers: "appended" in one piece (or
        failed, holding single commands only), "redone" command by command after a conflict,
        or "failed" whole, holding a batch caller's commands."""
        started = time.monotonic()
        try:
            if self._loop_store is not None and prepared.events and prepared.tracking is None:
                outcome = await self._stored_on_loop(batch, prepared, self._loop_store)
            else:
                outcome = await asyncio.to_thread(self._committing.store_prepared, batch, prepared)
            APPEND.observe(time.monotonic() - started)
        except asyncio.CancelledError:
            for unit in batch:
                unit.future.cancel()
            raise
        except Exception as error:  # a store outage fails the batch, not the bus
            settle(batch, error)
            self._audited(batch, prepared)
            # Order matters to a batch's caller (a partition's polls), not to single commands.
            return "failed" if any(unit.batch for unit in batch) else "appended"
        settle(batch, None)
        self._audited(batch, prepared)
        return outcome

    async def _stored_on_loop(
        self, batch: list[Unit], prepared: Prepared, loop_store: LoopStore
    ) -> str:
        """``Committing.store_prepared`` through asyncpg. A conflict is redone as there, in a
        thread.
        Any other failure (a connection lost, a lock not had in time) appends in a thread
        instead, with the library's retries: if the lost append had committed, that one
        conflicts and is redone, and each command is answered as the store now has it."""
        try:
            ids = await loop_store.append(prepared.stored)
        except IntegrityError:
            return await asyncio.to_thread(self._committing.redone, batch, prepared)
        except Exception as error:
            log.warning("append on the event loop failed (%r): appending in a thread", error)
            return await asyncio.to_thread(self._committing.store_prepared, batch, prepared)
        self._committing.stored_once(prepared)
        self._committing.answer(prepared, ids, max(ids))
        return "appended"

    async def _next_batch(self) -> list[Unit]:
        first = self._held or await self._queue.get()
        self._held = None
        batch, size, tracked = [first], len(first.commands), first.tracking is not None
        while size < self._max_batch and not self._queue.empty():
            unit = self._queue.get_nowait()
            if tracked and unit.tracking is not None:
                self._held = unit
                break
            tracked = tracked or unit.tracking is not None
            batch.append(unit)
            size += len(unit.commands)
        QUEUED.observe(time.monotonic() - first.submitted)
        return batch
