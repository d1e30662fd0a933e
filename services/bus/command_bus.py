"""The one command-handling path: HTTP and Kafka entry points both submit here.

Commands that arrive together are decided one after the other and appended in ONE transaction
(group commit): on these 2-core machines the library appends ~470–720 single-event
transactions/s but ~7,000–10,000 events/s in batches of 100 (``make bench``). A batch that
meets a concurrency conflict is redone command by command, each reloading and deciding again,
so one conflict never fails its neighbours.

Two ways in:

- ``execute(issued)``: one command (HTTP, the hand-over webhook). Its tracking record, if any,
  commits with its events only when it succeeds, so a failed one is tried again.
- ``execute_batch(commands, tracking)``: a poll's commands from one Kafka partition, decided
  together and appended in the same transaction as ONE tracking record, the partition's
  position. Refused commands count as settled (the consumer dead-letters them).

A bus batch holds at most one tracked unit, because the library writes one tracking record per
transaction.

A command with an ``identity`` (a CloudEvent's ``source`` + ``id``) is applied at most once,
whatever the offsets say: a ``Receipt`` aggregate whose id derives from the identity is
created with the command's events, in the same transaction. A receipt rather than trusting
each handler, because not every effect is a create with a deterministic id (a command that
moves an existing aggregate would move it twice); a receipt rather than a table of our own,
because the library's transaction is the only one the events commit in. A second receipt for
the same identity fails the append with the library's IntegrityError; the batch is then redone
one command at a time, and a command whose receipt exists is answered ``already_applied``.
"""

import asyncio
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import lru_cache
from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import IntegrityError, Tracking
from eventsourcing.utils import get_topic
from pydantic import BaseModel, ValidationError

from contracts.errors import Conflict, DomainError, Refused
from services.observing.metrics import BUS_BATCH_COMMANDS, BUS_SECONDS
from services.observing.tracing import current_traceparent, stamp
from services.store.event_store import EventStore, LoopStore, existing
from services.store.making import made, uuid5_in

log = logging.getLogger(__name__)
QUEUED, DECIDE, APPEND = (BUS_SECONDS.labels(stage) for stage in ("queued", "decide", "append"))

MAX_ATTEMPTS = 5
# The most commands a batch decided on the event loop may hold (``CommandBus``'s ``alone``):
# about 6 ms of the loop's time at ~60 µs a RecordFeedback. A larger batch (the batch
# route's 1,000 items) is decided in a thread, where the loop keeps answering meanwhile.
ON_LOOP_MAX = 100
RECEIPT_NAMESPACE = UUID("41b01990-769e-4b63-86c5-4b9edb75c11d")


@dataclass(frozen=True)
class Issued:
    """A command as it reaches the bus: whose, when, under which command id."""

    command: BaseModel
    tenant_id: str
    actor: str
    command_id: str
    at: datetime
    tracking: Tracking | None = None
    identity: str | None = None  # applied at most once under it (see the module docstring)
    trace: str | None = (
        None  # W3C traceparent; by default the caller's (services/observing/tracing.py)
    )
    # The bus found no aggregate under the id this command creates (``Creates``): the handler
    # need not look it up. A lookup per command would be a round trip per command.
    new: bool = False
    service: bool = False  # the actor is a service, not a person (a service's API key)
    # What the command says (a hash), kept in its receipt: the same identity with another
    # digest is another request under a reused Idempotency-Key, refused (SPEC C11).
    digest: str | None = None


@dataclass
class Decision:
    """What a handler decided: aggregates with pending events, and the answer for the caller.

    Not frozen: the bus puts the receipt on the handler's fresh answer (``_decide``). Issue 12:
    a frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``, four
    times a plain one's cost, and the answer was built twice a command."""

    aggregates: list[Aggregate]
    result: Any
    committed: Callable[[], None] | None = None  # runs once the events are stored
    receipt: Any = None  # the command's Receipt.Recorded event, appended after the aggregates
    # The first events of new aggregates the handler did not build (issue 12: building one
    # through the library's ``_create`` and ``mutate`` only to collect its event again cost
    # most of a decision); appended after ``aggregates``' events, as they are.
    created: Sequence[Any] = ()


@dataclass(frozen=True)
class Outcome:
    result: Any
    position: int  # a read model at this position or later reflects the command
    already_applied: bool = False  # its identity had a receipt: nothing was decided again


Handler = Callable[[EventStore, Issued], Decision]
# The id of the aggregate a command creates if it is new. The bus asks which of a batch's ids
# exist in one query and marks the others ``Issued.new``; if another process creates one
# meanwhile, the append conflicts and the command is decided again, looked up this time.
Creates = Callable[[Issued], UUID]
# What a command applied before shows now, answered to its repeat (the same Idempotency-Key
# and request): a repeated review answers the report's state, not a refused transition.
Replay = Callable[[EventStore, Issued], Any]
Result = Outcome | BaseException


def as_new(issued: Issued) -> Issued:
    """The command marked ``new``: a copy with that one field changed, equal to what
    ``replace(issued, new=True)`` makes (a test compares them), without its check of every
    field and its call of ``__init__``: that was a thirtieth of the bus's time under Kafka
    ingest, for one flag (issue 12)."""
    marked = object.__new__(Issued)
    # A fresh object's own attributes: the frozen dataclass guards only ``setattr``.
    marked.__dict__.update(vars(issued), new=True)
    return marked


receipt_uuid5 = uuid5_in(RECEIPT_NAMESPACE)


@lru_cache(maxsize=8192)
def receipt_id(identity: str) -> UUID:
    """``uuid5(RECEIPT_NAMESPACE, identity)`` (``services.store.making``; issue 12: a twentieth of
    the inbound consumer's CPU went to deriving ids). Cached: the consumer asks for a poll's
    receipts by id, then the bus records them, so each id is derived twice within moments."""
    return receipt_uuid5(identity)


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
        """The event ``record`` would create, without building the aggregate: the bus only
        appends it. Issue 12: the aggregate (the library's ``mutate``) was three quarters of a
        receipt's ~15 µs. The same event, field for field (a test compares the stored bytes)."""
        # The fields in the event's order (a stored event writes them so), a UUID id (all its
        # ``__post_init__`` checks): about 3 µs by its ``__init__``, under 1 so (issue 12).
        return made(
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


@dataclass
class _Unit:
    """What one caller submitted: its commands, settled together."""

    commands: list[Issued]
    tracking: Tracking | None
    batch: bool  # from execute_batch: refused commands do not hold the tracking record back
    future: asyncio.Future[list[Result]]
    results: list[Result | None] = field(default_factory=list)
    submitted: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self.results = [None] * len(self.commands)


class NotTried(RuntimeError):
    """A command not tried because the batch appended before its own failed whole."""


@dataclass(frozen=True)
class _Prepared:
    """A batch decided, its events written as the store keeps them, ready to append."""

    decided: list[tuple[_Unit | None, int, Decision]]
    tracking: Tracking | None
    events: list[Any]
    ends: list[int]  # where each decision's events end in ``events``
    stored: list[Any]


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
    ) -> None:
        """``loop_store``: PostgreSQL through asyncpg, for what the bus can ask of it on the
        event loop (``LoopStore``): which aggregates exist, and the append of a batch with no
        tracking record. ``alone``: commands whose handler reads nothing from the store when
        the aggregate it creates is new (``Issued.new``); a batch of only such, all new, is
        decided on the event loop too, with no thread at all (issue 12)."""
        self._store = store
        self._loop_store = loop_store
        self._alone = alone
        self._handlers = handlers
        self._creates = creates or {}
        self._replays = replays or {}
        self._max_batch = max_batch
        self._queue: asyncio.Queue[_Unit] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._held: _Unit | None = None
        self.transactions = 0  # how many appends it took (group commit makes it < commands)

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
        future: asyncio.Future[list[Result]] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(_Unit(commands, tracking, batch, future))
        return future

    async def aclose(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)

    async def _work(self) -> None:
        """Issue 12: a batch is decided (and its events written as stored events) while the
        batch before it waits in PostgreSQL for its append; batches still append one after
        the other, in the order they were taken. A batch decided that way sees the store as
        it was before the batch in flight, as commands within one batch already do: a stale
        decision about an existing aggregate fails its append (a version conflict) and is
        redone, a created id taken meanwhile conflicts alike. If the batch before was redone
        command by command, this one is decided again once it is stored; if it failed whole,
        this one is not tried at all (``NotTried``), so that a later batch never commits past
        a failed one (an inbound partition's position, its events' order)."""
        appending: asyncio.Task[str] | None = None
        batch: list[_Unit] = []
        try:
            while True:
                batch = await self._next_batch()
                prepared = await self._prepared(batch)
                if appending is not None:
                    before = await appending
                    appending = None
                    if before == "failed":
                        error = NotTried("not tried: the batch before it failed")
                        self._settle(batch, error)
                        continue
                    if before == "redone" and not isinstance(prepared, BaseException):
                        for unit in batch:
                            unit.results = [None] * len(unit.commands)
                        prepared = await self._prepared(batch)
                if isinstance(prepared, BaseException):
                    self._settle(batch, prepared)
                    continue
                appending = asyncio.create_task(self._stored(batch, prepared))
        except asyncio.CancelledError:
            for unit in batch:  # taken, perhaps decided, not appended
                unit.future.cancel()
            if appending is not None:
                appending.cancel()
                await asyncio.gather(appending, return_exceptions=True)
            raise

    async def _prepared(self, batch: list[_Unit]) -> "_Prepared | BaseException":
        started = time.monotonic()
        try:
            if self._loop_store is None:
                prepared = await asyncio.to_thread(self._prepare, batch)
            else:
                creating = self._creating(batch)
                new = self._new(creating, await self._loop_store.existing(creating.values()))
                if self._alone_and_new(batch, new):
                    prepared = self._prepare(batch, new)
                else:
                    prepared = await asyncio.to_thread(self._prepare, batch, new)
            DECIDE.observe(time.monotonic() - started)
            return prepared
        except asyncio.CancelledError:
            for unit in batch:
                unit.future.cancel()
            raise
        except Exception as error:  # a store outage fails the batch, not the bus
            return error

    async def _stored(self, batch: list[_Unit], prepared: "_Prepared") -> str:
        """Append a prepared batch and answer its callers: "appended" in one piece (or
        failed, holding single commands only), "redone" command by command after a conflict,
        or "failed" whole, holding a batch caller's commands."""
        started = time.monotonic()
        try:
            if self._loop_store is not None and prepared.events and prepared.tracking is None:
                outcome = await self._stored_on_loop(batch, prepared, self._loop_store)
            else:
                outcome = await asyncio.to_thread(self._store_prepared, batch, prepared)
            APPEND.observe(time.monotonic() - started)
        except asyncio.CancelledError:
            for unit in batch:
                unit.future.cancel()
            raise
        except Exception as error:  # a store outage fails the batch, not the bus
            self._settle(batch, error)
            # Order matters to a batch's caller (a partition's polls), not to single commands.
            return "failed" if any(unit.batch for unit in batch) else "appended"
        self._settle(batch, None)
        return outcome

    async def _stored_on_loop(
        self, batch: list[_Unit], prepared: "_Prepared", loop_store: LoopStore
    ) -> str:
        """``_store_prepared`` through asyncpg. A conflict is redone as there, in a thread.
        Any other failure (a connection lost, a lock not had in time) appends in a thread
        instead, with the library's retries: if the lost append had committed, that one
        conflicts and is redone, and each command is answered as the store now has it."""
        try:
            ids = await loop_store.append(prepared.stored)
        except IntegrityError:
            return await asyncio.to_thread(self._redone, batch, prepared)
        except Exception as error:
            log.warning("append on the event loop failed (%r): appending in a thread", error)
            return await asyncio.to_thread(self._store_prepared, batch, prepared)
        self._stored_once(prepared)
        self._answer(prepared, ids, max(ids))
        return "appended"

    @staticmethod
    def _settle(batch: list[_Unit], error: BaseException | None) -> None:
        """Answer each caller of the batch; ``error`` for every command not settled yet."""
        for unit in batch:
            if error is not None:
                unit.results = [error if r is None else r for r in unit.results]
            if unit.future.done():
                continue
            lost = RuntimeError("the command was not settled")
            unit.future.set_result([lost if r is None else r for r in unit.results])

    async def _next_batch(self) -> list[_Unit]:
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

    def _prepare(self, batch: list[_Unit], new: set[int] | None = None) -> "_Prepared":
        """Runs in a worker thread (the library is synchronous), or on the event loop for a
        batch ``_alone_and_new``: decide every command and write their events as stored
        events, ready to append. ``new``: the commands (by ``id()``) whose aggregate does
        not exist yet, if asked already."""
        decided: list[tuple[_Unit | None, int, Decision]] = []
        if new is None:
            creating = self._creating(batch)
            new = self._new(creating, existing(self._store, creating.values()))
        for unit in batch:
            for index, issued in enumerate(unit.commands):
                try:
                    if repeated := self._keyed_repeat(issued):
                        unit.results[index] = repeated
                        continue
                    if id(issued) in new:
                        issued = as_new(issued)
                    decided.append((unit, index, self._decide(issued)))
                except Exception as error:  # this command's failure, not its neighbours'
                    if not isinstance(error, DomainError):
                        log.exception("%s failed", type(issued.command).__name__)
                    unit.results[index] = error
        tracking = next((t for unit in batch if (t := self._settled_position(unit))), None)
        events, ends = self._events(decided)
        stored = [self._store.mapper.to_stored_event(e) for e in events]
        return _Prepared(decided, tracking, events, ends, stored)

    def _store_prepared(self, batch: list[_Unit], prepared: "_Prepared") -> str:
        """Runs in a worker thread: append what ``_prepare`` made, in one transaction."""
        if not prepared.decided and prepared.tracking is None:
            return "appended"
        try:
            self._insert(prepared)
        except IntegrityError:
            return self._redone(batch, prepared)
        return "appended"

    def _redone(self, batch: list[_Unit], prepared: "_Prepared") -> str:
        """Runs in a worker thread: the batch whose append conflicted, redone command by
        command."""
        log.info("concurrency conflict in a batch of %d: redoing one by one", len(prepared.decided))
        for unit in batch:
            self._redo(unit)
        return "redone"

    def _creating(self, batch: list[_Unit]) -> dict[int, UUID]:
        """The aggregate each command of the batch (by ``id()``) creates if it is new."""
        return {
            id(issued): creates(issued)
            for unit in batch
            for issued in unit.commands
            if (creates := self._creates.get(type(issued.command))) is not None
        }

    @staticmethod
    def _new(creating: dict[int, UUID], found: set[UUID]) -> set[int]:
        """The commands (by ``id()``) whose aggregate was not ``found``."""
        return {command for command, aggregate in creating.items() if aggregate not in found}

    def _alone_and_new(self, batch: list[_Unit], new: set[int]) -> bool:
        """Whether the batch may be decided on the event loop: every command one of
        ``alone``, creating a new aggregate, not under an Idempotency-Key (whose receipt is
        looked up), and few enough (``ON_LOOP_MAX``)."""
        if sum(len(unit.commands) for unit in batch) > ON_LOOP_MAX:
            return False
        return all(
            type(issued.command) in self._alone and id(issued) in new and issued.digest is None
            for unit in batch
            for issued in unit.commands
        )

    @staticmethod
    def _settled_position(unit: _Unit) -> Tracking | None:
        """A single command's tracking record goes with its success only; a batch's always."""
        if unit.batch or all(not isinstance(r, BaseException) for r in unit.results):
            return unit.tracking
        return None

    def _redo(self, unit: _Unit) -> None:
        for index, issued in enumerate(unit.commands):
            if unit.results[index] is None:
                unit.results[index] = self._commit_alone(
                    issued, None if unit.batch else unit.tracking
                )
        if unit.batch and unit.tracking is not None:
            try:
                self._store.process_recorder.insert_tracking(unit.tracking)
                self.transactions += 1
            except IntegrityError:
                pass  # the position is as far or farther already

    def _commit_alone(self, issued: Issued, tracking: Tracking | None) -> Result:
        for _ in range(MAX_ATTEMPTS):
            try:
                if issued.identity is not None and (receipt := self._receipt(issued.identity)):
                    return self._repeated(issued, receipt)
                decision = self._decide(issued)
                return self._append([(None, 0, decision)], tracking, trace=issued.trace)[0]
            except IntegrityError:
                if tracking is not None and self._already_applied(tracking):
                    return self._repeated()
                continue  # someone else appended first: reload and decide again
            except Exception as error:
                return error
        return RuntimeError(f"gave up after {MAX_ATTEMPTS} concurrency conflicts")

    def _repeated(self, issued: Issued | None = None, receipt: Any = None) -> Result:
        """A command applied before: refused if its identity now comes with another request,
        else answered with what it shows now (``replays``), appending nothing."""
        recorded = getattr(receipt, "digest", None)
        if (
            issued is not None
            and None not in (recorded, issued.digest)
            and recorded != issued.digest
        ):
            return Conflict(
                "this Idempotency-Key was used before with another request",
                field="Idempotency-Key",
            )
        replay = self._replays.get(type(issued.command)) if issued is not None else None
        try:
            result = replay(self._store, issued) if replay and issued is not None else None
        except DomainError as error:
            return error
        position = self._store.recorder.max_notification_id() or 0
        return Outcome(result, position, already_applied=True)

    def _keyed_repeat(self, issued: Issued) -> Result | None:
        """A request repeated under its Idempotency-Key (it has a digest): answered before it
        is decided again, since deciding a move twice would refuse it (a second review)."""
        if issued.identity is None or issued.digest is None:
            return None  # inbound commands: the consumer asks for a whole poll at once
        receipt = self._receipt(issued.identity)
        return None if receipt is None else self._repeated(issued, receipt)

    def _receipt(self, identity: str) -> Receipt | None:
        try:
            receipt: Receipt = self._store.repository.get(receipt_id(identity))
        except AggregateNotFoundError:
            return None
        return receipt

    def _already_applied(self, tracking: Tracking) -> bool:
        recorder = self._store.process_recorder
        return recorder.has_tracking_id(tracking.application_name, tracking.notification_id)

    def _decide(self, issued: Issued) -> Decision:
        decision = self._handlers[type(issued.command)](self._store, issued)
        if issued.identity is None:
            return decision
        # A handler answers a new Decision each time: the receipt goes on it in place.
        decision.receipt = Receipt.recorded(
            issued.identity, type(issued.command).__name__, issued.at, issued.digest
        )
        return decision

    def _append(
        self,
        decided: list[tuple[_Unit | None, int, Decision]],
        tracking: Tracking | None,
        trace: str | None = None,
    ) -> list[Outcome]:
        events, ends = self._events(decided, trace)
        stored = [self._store.mapper.to_stored_event(event) for event in events]
        return self._insert(_Prepared(decided, tracking, events, ends, stored))

    @staticmethod
    def _events(
        decided: list[tuple[_Unit | None, int, Decision]], trace: str | None = None
    ) -> tuple[list[Any], list[int]]:
        """The decisions' new events, in order, each stamped with its command's trace; and
        where each decision's events end in that list (they start where the one before's
        end)."""
        events: list[Any] = []
        ends: list[int] = []
        for unit, index, decision in decided:
            if unit is not None:
                trace = unit.commands[index].trace
            for aggregate in decision.aggregates:
                for event in aggregate.collect_events():
                    stamp(event, trace)
                    events.append(event)
            for event in decision.created:
                stamp(event, trace)
                events.append(event)
            if decision.receipt is not None:
                stamp(decision.receipt, trace)
                events.append(decision.receipt)
            ends.append(len(events))
        return events, ends

    def _insert(self, prepared: "_Prepared") -> list[Outcome]:
        """Append the prepared events and tracking record in one transaction; answers each
        decision's outcome."""
        ids: Sequence[int] = ()
        if prepared.events or prepared.tracking:
            # The library's EventStore.put, without the Recording and Notification it builds
            # per event for callers that want them (issue 12): only the positions are needed.
            stored = self._store.recorder.insert_events(prepared.stored, tracking=prepared.tracking)
            ids = stored or ()  # as put: a recorder that answers no ids gives none
            self._stored_once(prepared)
        if ids or not prepared.decided:
            head = max(ids, default=0)
        else:
            head = self._store.recorder.max_notification_id() or 0
        return self._answer(prepared, ids, head)

    def _stored_once(self, prepared: "_Prepared") -> None:
        self.transactions += 1
        BUS_BATCH_COMMANDS.observe(len(prepared.decided))

    @staticmethod
    def _answer(prepared: "_Prepared", ids: Sequence[int], head: int) -> list[Outcome]:
        """Each decision's outcome, once its events are stored at ``ids``. A decision that
        appended nothing (a repeated command) is answered ``head``: a position it was stored
        at or before (its events committed before it was decided, and commit order is
        position order), the batch's last if the batch appended anything."""
        outcomes = []
        start = 0
        for (unit, index, decision), end in zip(prepared.decided, prepared.ends, strict=True):
            # A decision's position is its last event's: the ids come in insert order, and
            # the append lock makes them grow with it. Issue 12: read by place in the list,
            # not through a dict keyed by (aggregate id, version), whose UUID hashing was a
            # twentieth of the bus's thread under Kafka ingest.
            position = max(ids[start:end]) if ids and end > start else head
            start = end
            if decision.committed is not None:
                decision.committed()
            outcome = Outcome(decision.result, position)
            outcomes.append(outcome)
            if unit is not None:
                unit.results[index] = outcome
        return outcomes


def command_from(
    data: object,
    model: type[BaseModel],
    stamped: frozenset[str],
    *,
    strict: bool | None = None,
    as_json: Callable[[Any], str | bytes] = json.dumps,
) -> BaseModel:
    """A command from a decoded body (HTTP or a CloudEvent's data), the same for every entry
    point: stamped fields are refused by name before anything else is read.

    ``strict=None`` reads as the model is declared; ``True`` reads our own commands strictly
    (JSON types only, no coercion, unknown fields refused); ``False`` reads another service's
    events tolerantly (unknown fields kept on the model and ignored). ``as_json`` writes the
    data for a strict reading: a caller that knows its data holds only finite numbers may pass
    a faster writer (``services.kafka.inbound.parsing.data_as_json``)."""
    if not isinstance(data, dict):
        raise Refused("the command must be a JSON object", field="body")
    for name in sorted(stamped & data.keys()):
        raise Refused(f"{name} is stamped by the server; do not send it", field=name)
    try:
        if strict is None:
            return model.model_validate(data)
        if strict:
            # JSON mode: strict Python mode would want enum instances, not their values.
            return model.model_validate_json(as_json(data), strict=True, extra="forbid")
        return model.model_validate(data, extra="allow")
    except ValidationError as exc:
        problems = [
            {"field": ".".join(str(p) for p in e["loc"]) or "body", "message": e["msg"]}
            for e in exc.errors()
        ]
        first = problems[0]
        raise Refused(
            f"{first['field']}: {first['message']}", field=first["field"], problems=problems
        ) from None
