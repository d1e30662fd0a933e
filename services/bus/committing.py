"""Committing what the bus decided: a prepared batch appended in one transaction with its
tracking record, each decision answered with its position; after a conflict, the batch redone
command by command, each reloaded and decided again, so one conflict never fails its
neighbours.

Appends go through the store's recorder (``ColumnsRecorder.insert_events``), in a worker
thread; the bus's append on the event loop (``services.store.fast_loop_store``) answers
through ``answer`` here too.
"""

import logging
from collections.abc import Sequence

from eventsourcing.persistence import IntegrityError, Tracking
from tenacity import RetryError, Retrying, retry_if_exception_type, stop_after_attempt

from services.bus.deciding import Deciding
from services.bus.decisions import Outcome, Result
from services.bus.issued import Issued
from services.bus.units import Decided, Prepared, Unit
from services.observing.metrics import BUS_BATCH_COMMANDS
from services.store.event_store import EventStore
from services.store.sealing import stored_events

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 5


class Committing:
    def __init__(self, store: EventStore, deciding: Deciding) -> None:
        self._store = store
        self._deciding = deciding
        self.transactions = 0  # how many appends it took (group commit makes it < commands)

    def store_prepared(self, batch: list[Unit], prepared: Prepared) -> str:
        """Runs in a worker thread: append what ``Deciding.prepare`` made, in one
        transaction; "appended", or "redone" command by command after a conflict."""
        if not prepared.decided and prepared.tracking is None:
            return "appended"
        try:
            self.insert(prepared)
        except IntegrityError:
            return self.redone(batch, prepared)
        return "appended"

    def redone(self, batch: list[Unit], prepared: Prepared) -> str:
        """Runs in a worker thread: the batch whose append conflicted, redone command by
        command."""
        log.info("concurrency conflict in a batch of %d: redoing one by one", len(prepared.decided))
        for unit in batch:
            self._redo(unit)
        return "redone"

    def _redo(self, unit: Unit) -> None:
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
        """One command reloaded, decided and appended; after a conflict (someone else
        appended first), again, without a pause: the conflict is already resolved."""
        conflicts = Retrying(
            retry=retry_if_exception_type(IntegrityError), stop=stop_after_attempt(MAX_ATTEMPTS)
        )
        try:
            for attempt in conflicts:
                with attempt:
                    return self._commit_once(issued, tracking)
        except RetryError:
            return RuntimeError(f"gave up after {MAX_ATTEMPTS} concurrency conflicts")
        except Exception as error:
            return error
        raise AssertionError("tenacity stops with RetryError")

    def _commit_once(self, issued: Issued, tracking: Tracking | None) -> Result:
        deciding = self._deciding
        try:
            if issued.identity is not None and (receipt := deciding.receipt(issued.identity)):
                return deciding.repeated(issued, receipt)
            decision = deciding.decide(issued)
            return self._append([(None, 0, decision)], tracking, trace=issued.trace)[0]
        except IntegrityError:
            if tracking is not None and self._already_applied(tracking):
                return deciding.repeated()
            raise

    def _already_applied(self, tracking: Tracking) -> bool:
        recorder = self._store.process_recorder
        return recorder.has_tracking_id(tracking.application_name, tracking.notification_id)

    def _append(
        self, decided: list[Decided], tracking: Tracking | None, trace: str | None = None
    ) -> list[Outcome]:
        events, ends = self._deciding.events(decided, trace)
        stored = stored_events(self._store.mapper, events)  # decisions D220
        return self.insert(Prepared(decided, tracking, events, ends, stored))

    def insert(self, prepared: Prepared) -> list[Outcome]:
        """Append the prepared events and tracking record in one transaction; answers each
        decision's outcome."""
        ids: Sequence[int] = ()
        if prepared.events or prepared.tracking:
            # The library's EventStore.put, without the Recording and Notification it builds
            # per event for callers that want them: only the positions are needed.
            stored = self._store.recorder.insert_events(prepared.stored, tracking=prepared.tracking)
            ids = stored or ()  # as put: a recorder that answers no ids gives none
            self.stored_once(prepared)
        if ids or not prepared.decided:
            head = max(ids, default=0)
        else:
            head = self._store.recorder.max_notification_id() or 0
        return self.answer(prepared, ids, head)

    def stored_once(self, prepared: Prepared) -> None:
        self.transactions += 1
        BUS_BATCH_COMMANDS.observe(len(prepared.decided))

    @staticmethod
    def answer(prepared: Prepared, ids: Sequence[int], head: int) -> list[Outcome]:
        """Each decision's outcome, once its events are stored at ``ids``. A decision that
        appended nothing (a repeated command) is answered ``head``: a position it was stored
        at or before (its events committed before it was decided, and commit order is
        position order), the batch's last if the batch appended anything."""
        outcomes = []
        start = 0
        for (unit, index, decision), end in zip(prepared.decided, prepared.ends, strict=True):
            # A decision's position is its last event's: the ids come in insert order, and
            # the append lock makes them grow with it. Read by place in the list, not through
            # a dict keyed by (aggregate id, version): that would hash a UUID per event.
            position = max(ids[start:end]) if ids and end > start else head
            start = end
            if decision.committed is not None:
                decision.committed()
            outcome = Outcome(decision.result, position)
            outcomes.append(outcome)
            if unit is not None:
                unit.results[index] = outcome
        return outcomes
