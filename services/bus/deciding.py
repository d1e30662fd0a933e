"""Deciding a batch: each command by its handler, in order, each failure its own; and the
decisions' events written as the store keeps them, ready to append.

Runs in a worker thread (the library is synchronous), or on the event loop for a batch of
commands that read nothing from the store (``alone_and_new``).
"""

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from pydantic import BaseModel

from contracts.errors import Conflict, DomainError
from services.bus.decisions import Creates, Decision, Handler, Outcome, Replay, Result
from services.bus.fast_marking import as_new
from services.bus.issued import Issued
from services.bus.receipts import receipt_id
from services.bus.units import Decided, Prepared, Unit, settled_position
from services.observing.tracing import stamp
from services.store.event_store import EventStore
from services.store.existing import existing
from services.store.sealing import stored_events

log = logging.getLogger(__name__)

# The most commands a batch decided on the event loop may hold (``alone_and_new``): a few
# milliseconds of the loop's time. A larger batch (the batch route's 1,000 items) is decided
# in a thread, where the loop keeps answering meanwhile.
ON_LOOP_MAX = 100

# The receipt's event for (identity, command name, time, digest): ``Receipt.recorded``, which
# lives with the bus (``services.bus.command_bus``: its module path is its topic).
ReceiptEvent = Callable[[str, str, datetime, str | None], Any]


class Deciding:
    def __init__(
        self,
        store: EventStore,
        handlers: dict[type[BaseModel], Handler],
        creates: dict[type[BaseModel], Creates],
        replays: dict[type[BaseModel], Replay],
        alone: frozenset[type[BaseModel]],
        receipt_event: ReceiptEvent,
    ) -> None:
        self._store = store
        self._handlers = handlers
        self._creates = creates
        self._replays = replays
        self._alone = alone
        self._receipt_event = receipt_event

    def prepare(self, batch: list[Unit], new: set[int] | None = None) -> Prepared:
        """Decide every command and write their events as stored events, ready to append.
        ``new``: the commands (by ``id()``) whose aggregate does not exist yet, if asked
        already."""
        decided: list[Decided] = []
        if new is None:
            creating = self.creating(batch)
            new = self.new(creating, existing(self._store, creating.values()))
        for unit in batch:
            for index, issued in enumerate(unit.commands):
                try:
                    if repeated := self.keyed_repeat(issued):
                        unit.results[index] = repeated
                        continue
                    if id(issued) in new:
                        issued = as_new(issued)
                    decided.append((unit, index, self.decide(issued)))
                except Exception as error:  # this command's failure, not its neighbours'
                    if not isinstance(error, DomainError):
                        log.exception("%s failed", type(issued.command).__name__)
                    unit.results[index] = error
        tracking = next((t for unit in batch if (t := settled_position(unit))), None)
        events, ends = self.events(decided)
        stored = stored_events(self._store.mapper, events)  # decisions D220
        return Prepared(decided, tracking, events, ends, stored)

    def creating(self, batch: list[Unit]) -> dict[int, UUID]:
        """The aggregate each command of the batch (by ``id()``) creates if it is new."""
        return {
            id(issued): creates(issued)
            for unit in batch
            for issued in unit.commands
            if (creates := self._creates.get(type(issued.command))) is not None
        }

    @staticmethod
    def new(creating: dict[int, UUID], found: set[UUID]) -> set[int]:
        """The commands (by ``id()``) whose aggregate was not ``found``."""
        return {command for command, aggregate in creating.items() if aggregate not in found}

    def alone_and_new(self, batch: list[Unit], new: set[int]) -> bool:
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

    def decide(self, issued: Issued) -> Decision:
        decision = self._handlers[type(issued.command)](self._store, issued)
        if issued.identity is None:
            return decision
        # A handler answers a new Decision each time: the receipt goes on it in place.
        decision.receipt = self._receipt_event(
            issued.identity, type(issued.command).__name__, issued.at, issued.digest
        )
        return decision

    def keyed_repeat(self, issued: Issued) -> Result | None:
        """A request repeated under its Idempotency-Key (it has a digest): answered before it
        is decided again, since deciding a move twice would refuse it (a second review)."""
        if issued.identity is None or issued.digest is None:
            return None  # inbound commands: the consumer asks for a whole poll at once
        receipt = self.receipt(issued.identity)
        return None if receipt is None else self.repeated(issued, receipt)

    def repeated(self, issued: Issued | None = None, receipt: Any = None) -> Result:
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

    def receipt(self, identity: str) -> Any:
        """The ``Receipt`` of this identity, or None."""
        try:
            return self._store.repository.get(receipt_id(identity))
        except AggregateNotFoundError:
            return None

    @staticmethod
    def events(decided: list[Decided], trace: str | None = None) -> tuple[list[Any], list[int]]:
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
