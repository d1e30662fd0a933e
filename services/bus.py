"""The one command-handling path: HTTP and Kafka entry points both submit here.

Commands that arrive together are decided one after the other and appended in ONE transaction
(group commit): on these 2-core machines the library appends ~470–720 single-event
transactions/s but ~7,000–10,000 events/s in batches of 100 (``make bench``). A batch that
meets a concurrency conflict is redone command by command, each reloading and deciding again,
so one conflict never fails its neighbours.

An inbound Kafka message carries a tracking record ``(topic:partition, offset)``; it is
committed with the message's events, so a redelivered message is recognised and applied once.
A batch holds at most one tracked command, because the library writes one tracking record per
transaction.
"""

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate
from eventsourcing.persistence import IntegrityError, Tracking
from pydantic import BaseModel, ValidationError

from services.errors import DomainError, Refused
from services.store import EventStore
from services.tracing import current_traceparent, stamp

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 5


@dataclass(frozen=True)
class Issued:
    """A command as it reaches the bus: whose, when, under which command id."""

    command: BaseModel
    tenant_id: str
    actor: str
    command_id: str
    at: datetime
    tracking: Tracking | None = None
    trace: str | None = None  # W3C traceparent; by default the caller's (services/tracing.py)


@dataclass(frozen=True)
class Decision:
    """What a handler decided: aggregates with pending events, and the answer for the caller."""

    aggregates: list[Aggregate]
    result: Any
    committed: Callable[[], None] | None = None  # runs once the events are stored


@dataclass(frozen=True)
class Outcome:
    result: Any
    position: int  # a read model at this position or later reflects the command


Handler = Callable[[EventStore, Issued], Decision]


@dataclass
class _Pending:
    issued: Issued
    future: asyncio.Future[Outcome]
    outcome: Outcome | BaseException | None = field(default=None)


class CommandBus:
    def __init__(
        self, store: EventStore, handlers: dict[type[BaseModel], Handler], max_batch: int = 100
    ) -> None:
        self._store = store
        self._handlers = handlers
        self._max_batch = max_batch
        self._queue: asyncio.Queue[_Pending] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._held: _Pending | None = None
        self.transactions = 0  # how many appends it took (group commit makes it < commands)

    async def execute(self, issued: Issued) -> Outcome:
        """Decide and append one command; raises its DomainError, if any, to the caller."""
        if type(issued.command) not in self._handlers:
            raise TypeError(f"no handler for {type(issued.command).__name__}")
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._work(), name="command-bus")
        if issued.trace is None and (trace := current_traceparent.get()) is not None:
            issued = replace(issued, trace=trace)
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        await self._queue.put(_Pending(issued, future))
        return await future

    async def aclose(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)

    async def _work(self) -> None:
        while True:
            batch = await self._next_batch()
            try:
                await asyncio.to_thread(self._commit, batch)
            except asyncio.CancelledError:
                for pending in batch:
                    pending.future.cancel()
                raise
            except Exception as error:  # a store outage fails the batch, not the bus
                for pending in batch:
                    pending.outcome = pending.outcome or error
            for pending in batch:
                if pending.future.done():
                    continue
                if isinstance(pending.outcome, BaseException):
                    pending.future.set_exception(pending.outcome)
                elif pending.outcome is not None:
                    pending.future.set_result(pending.outcome)

    async def _next_batch(self) -> list[_Pending]:
        first = self._held or await self._queue.get()
        self._held = None
        batch, tracked = [first], first.issued.tracking is not None
        while len(batch) < self._max_batch and not self._queue.empty():
            pending = self._queue.get_nowait()
            if tracked and pending.issued.tracking is not None:
                self._held = pending
                break
            tracked = tracked or pending.issued.tracking is not None
            batch.append(pending)
        return batch

    def _commit(self, batch: list[_Pending]) -> None:
        """Runs in a worker thread: the library is synchronous."""
        decided: list[tuple[_Pending, Decision]] = []
        for pending in batch:
            try:
                decided.append((pending, self._decide(pending.issued)))
            except Exception as error:  # this command's failure, not its neighbours'
                if not isinstance(error, DomainError):
                    log.exception("%s failed", type(pending.issued.command).__name__)
                pending.outcome = error
        if not decided:
            return
        try:
            self._append(decided)
        except IntegrityError:
            log.info("concurrency conflict in a batch of %d: redoing one by one", len(decided))
            for pending, _ in decided:
                pending.outcome = self._commit_alone(pending.issued)

    def _commit_alone(self, issued: Issued) -> Outcome | BaseException:
        for _ in range(MAX_ATTEMPTS):
            try:
                decision = self._decide(issued)
                return self._append(
                    [(None, decision)], tracking=issued.tracking, trace=issued.trace
                )[0]
            except IntegrityError:
                if issued.tracking is not None and self._already_applied(issued.tracking):
                    return Outcome(None, self._store.recorder.max_notification_id() or 0)
                continue  # someone else appended first: reload and decide again
            except Exception as error:
                return error
        return RuntimeError(f"gave up after {MAX_ATTEMPTS} concurrency conflicts")

    def _already_applied(self, tracking: Tracking) -> bool:
        recorder = self._store.process_recorder
        return recorder.has_tracking_id(tracking.application_name, tracking.notification_id)

    def _decide(self, issued: Issued) -> Decision:
        return self._handlers[type(issued.command)](self._store, issued)

    def _append(
        self,
        decided: list[tuple[Any, Decision]],
        tracking: Tracking | None = None,
        trace: str | None = None,
    ) -> list[Outcome]:
        events: list[Any] = []
        for pending, decision in decided:
            if pending is not None:
                trace = pending.issued.trace
            for aggregate in decision.aggregates:
                for event in aggregate.collect_events():
                    stamp(event, trace)
                    events.append(event)
            if pending is not None and pending.issued.tracking is not None:
                tracking = pending.issued.tracking
        recordings = []
        if events or tracking:
            recordings = self._store.events.put(events, tracking=tracking)
            self.transactions += 1
        positions = {
            (r.domain_event.originator_id, r.domain_event.originator_version): r.notification.id
            for r in recordings
        }
        head = None
        outcomes = []
        for pending, decision in decided:
            mine = [
                positions[(a.id, a.version)]
                for a in decision.aggregates
                if (a.id, a.version) in positions
            ]
            if not mine:  # nothing new (a repeated command): anything at the head reflects it
                head = head if head is not None else self._store.recorder.max_notification_id() or 0
                mine = [head]
            if decision.committed is not None:
                decision.committed()
            outcome = Outcome(decision.result, max(mine))
            outcomes.append(outcome)
            if pending is not None:
                pending.outcome = outcome
        return outcomes


def command_from(data: object, model: type[BaseModel], stamped: frozenset[str]) -> BaseModel:
    """A command from a decoded body (HTTP or a CloudEvent's data), the same for every entry
    point: stamped fields are refused by name before anything else is read."""
    if not isinstance(data, dict):
        raise Refused("the command must be a JSON object", field="body")
    for name in sorted(stamped & data.keys()):
        raise Refused(f"{name} is stamped by the server; do not send it", field=name)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = [
            {"field": ".".join(str(p) for p in e["loc"]), "message": e["msg"]} for e in exc.errors()
        ]
        first = problems[0]
        raise Refused(
            f"{first['field']}: {first['message']}", field=first["field"], problems=problems
        ) from None
