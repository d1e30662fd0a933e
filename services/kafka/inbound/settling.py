"""One partition's slice of a poll settled: its commands applied through the command bus, with
the partition's position, in one transaction; a refused message dead-lettered; a failed one
retried with backoff, then parked.

A refusal (``DomainError``) is the message's answer at once (a dead letter). Anything else is
tried again after a pause that doubles up to ``max_backoff`` (tenacity). While PostgreSQL does
not answer, the wait is unbounded, because no message could be settled anyway; while it
answers, a message that keeps failing is parked after ``max_attempts`` and the partition moves
on. From the third try, a message is tried on its own, so that one bad message does not fail
its neighbours' transaction.
"""

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import asyncpg
from eventsourcing.persistence import Tracking
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, wait_exponential

from contracts.errors import DomainError
from services.bus.command_bus import CommandBus
from services.bus.decisions import Outcome, Result
from services.bus.issued import Issued
from services.bus.receipts import receipt_id
from services.kafka.inbound.dead_letters import DeadLetters
from services.kafka.inbound.parking import park
from services.kafka.inbound.polls import Poll, Slice
from services.kafka.inbound.reading import Command, Refusal
from services.store.event_store import EventStore
from services.store.existing import EXISTING_ON_LOOP

log = logging.getLogger(__name__)

RECEIVED = EXISTING_ON_LOOP  # which receipts exist, by id
ALONE_FROM = 2  # failed tries (PostgreSQL answering) after which a message is tried on its own


class Failed(DomainError):
    """A message that kept failing for reasons of its own; parked with this reason."""

    code = "failed"


class StillFailing(Exception):
    """Messages of a slice that failed this try, for reasons other than a refusal."""

    def __init__(self, failures: list[tuple[Command, Any]]) -> None:
        super().__init__(f"{len(failures)} message(s) failed: {failures[0][1]}")
        self.failures = failures


@dataclass
class Tally:
    """What became of the messages a consumer settled (for status, tests and the bench)."""

    applied: int = 0  # commands whose events it committed
    repeated: int = 0  # commands recognised by identity as applied before
    dead_lettered: int = 0
    parked: int = 0
    failed_attempts: int = 0  # attempts that failed for other reasons than a refusal

    @property
    def settled(self) -> int:
        return self.applied + self.repeated + self.dead_lettered + self.parked


@dataclass
class Settler:
    bus: CommandBus
    store: EventStore
    pool: asyncpg.Pool
    tally: Tally
    pause: Callable[[float], Awaitable[None]]  # raises when asked to stop meanwhile
    max_attempts: int
    backoff: float
    max_backoff: float

    async def settle(
        self,
        records: list[Any],
        commands: list[Command],
        refused: list[Refusal],
        poll: Poll,
        dead_letters: DeadLetters,
    ) -> None:
        """One partition's slice of a poll (``records``, read into ``commands`` and the messages
        ``refused`` on reading): decide, apply, dead-letter or park every message."""
        first = records[0]
        name = f"{first.topic}:{first.partition}"
        refused = refused + await self.apply(commands, name, records[-1].offset, poll)
        written, parked = await dead_letters.send(refused)
        self.tally.dead_lettered += written
        self.tally.parked += parked

    async def apply(
        self, commands: list[Command], name: str, last: int, poll: Poll
    ) -> list[Refusal]:
        """Apply the commands and record the position ``last`` of the partition ``name``;
        answers the refused ones. A retry never overtakes the poll before."""
        refused: list[Refusal] = []
        pending = commands
        counted = 0  # failed tries while PostgreSQL answered
        first: Slice | None = poll.slice()  # the first try takes its turn in the queue

        def retrying(state: RetryCallState) -> None:
            failing = state.outcome.exception() if state.outcome else None
            assert isinstance(failing, StillFailing)
            log.warning(
                "inbound: %d message(s) of %s failed (%s); retrying in %.1fs",
                len(failing.failures),
                name,
                failing.failures[0][1],
                state.upcoming_sleep,
            )

        tries = AsyncRetrying(
            retry=retry_if_exception_type(StillFailing),
            stop=lambda state: counted >= self.max_attempts,
            wait=wait_exponential(multiplier=self.backoff, max=self.max_backoff),
            before_sleep=retrying,
            sleep=self.pause,
            reraise=True,
        )
        try:
            async for attempt in tries:
                with attempt:
                    try:
                        results = await self._attempt(
                            pending, name, last, first, alone=counted >= ALONE_FROM
                        )
                    except Exception as error:  # the store away, most likely
                        results = [error] * len(pending)
                    finally:
                        if first is not None:
                            first.queued()
                            first = None
                    failures = self._count(pending, results, refused)
                    if failures:
                        self.tally.failed_attempts += 1
                        await poll.before_settled()
                        if await self._store_answers():
                            counted += 1
                        pending = [command for command, _ in failures]
                        raise StillFailing(failures)
        except StillFailing as failing:
            for command, result in failing.failures:
                reason = f"failed {counted} times: {type(result).__name__}: {result}"
                log.error("inbound: parking %s@%s: %s", name, command.record.offset, reason)
                await park(self.pool, command.record, Failed(reason), "parked")
                self.tally.parked += 1
        return refused

    def _count(
        self, commands: list[Command], results: list[Any], refused: list[Refusal]
    ) -> list[tuple[Command, Any]]:
        """Tallies the applied and repeated, adds the refused; answers the failures."""
        failures = []
        for command, result in zip(commands, results, strict=True):
            if isinstance(result, Outcome):
                if result.already_applied:
                    self.tally.repeated += 1
                else:
                    self.tally.applied += 1
            elif isinstance(result, DomainError):
                refused.append((command.record, result))
            else:
                failures.append((command, result))
        return failures

    async def _attempt(
        self, commands: list[Command], name: str, last: int, turn: Slice | None, *, alone: bool
    ) -> list[Result]:
        """One try at the commands. On a poll's first try (``turn``), the bus gets them in
        the poll's turn, and the poll after may take its own once they are queued."""
        results: dict[int, Result] = {}
        admitted: list[tuple[int, Command]] = []
        for index, command in enumerate(commands):
            try:
                if command.subscription.admit is not None:
                    await command.subscription.admit(self.pool, command.issued)
                admitted.append((index, command))
            except Exception as error:  # a refusal, or this message's failure alone
                results[index] = error
        received = await self._received([c.issued for _, c in admitted])
        fresh = []
        for index, command in admitted:
            if command.issued.identity in received:
                results[index] = Outcome(None, 0, already_applied=True)
            else:
                fresh.append((index, command))
        tracking = await self._position(name, last)
        if not fresh and tracking is None:
            pass
        elif alone:  # a message that failed its neighbours' transaction is tried on its own
            for index, command in fresh:
                [results[index]] = await self.bus.execute_batch([command.issued], None)
            if tracking is not None:
                await self.bus.execute_batch([], tracking)
        else:
            if turn is not None:
                await turn.poll.turn()
            answer = self.bus.submit_batch([c.issued for _, c in fresh], tracking)
            if turn is not None:
                turn.queued()
            applied = await answer
            results.update(zip((i for i, _ in fresh), applied, strict=True))
        return [results[i] for i in range(len(commands))]

    async def _received(self, issued: list[Issued]) -> set[str | None]:
        """Identities applied before, in one query (a redelivered batch costs no conflicts)."""
        by_id = {receipt_id(i.identity): i.identity for i in issued if i.identity is not None}
        if not by_id:
            return set()
        rows = await self.pool.fetch(RECEIVED, list(by_id))
        return {by_id[UUID(str(row["id"]))] for row in rows}

    async def _position(self, name: str, last: int) -> Tracking | None:
        """The tracking record to write, if it moves the position forward. After a topic is
        recreated its offsets restart below the recorded position: the position then stays
        until they pass it (it only says how far a consumer got; identities decide)."""
        recorder = self.store.process_recorder
        position = await asyncio.to_thread(recorder.max_tracking_id, name)
        return Tracking(name, last) if position is None or last > position else None

    async def _store_answers(self) -> bool:
        try:
            async with asyncio.timeout(5):
                await self.pool.fetchval("SELECT 1")
        except Exception:
            return False
        return True
