"""What the bus carries between taking a batch and answering it: each caller's unit of
commands, a batch decided and ready to append, and how a unit is settled."""

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from eventsourcing.persistence import Tracking

from services.bus.decisions import Decision, Result
from services.bus.issued import Issued


@dataclass
class Unit:
    """What one caller submitted: its commands, settled together."""

    commands: list[Issued]
    tracking: Tracking | None
    batch: bool  # from execute_batch: refused commands do not hold the tracking record back
    future: asyncio.Future[list[Result]]
    results: list[Result | None] = field(default_factory=list)
    submitted: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self.results = [None] * len(self.commands)


# A decision and where it came from: its unit and its place there (None for a command
# decided alone, after a conflict).
Decided = tuple[Unit | None, int, Decision]


@dataclass(frozen=True)
class Prepared:
    """A batch decided, its events written as the store keeps them, ready to append."""

    decided: list[Decided]
    tracking: Tracking | None
    events: list[Any]
    ends: list[int]  # where each decision's events end in ``events``
    stored: list[Any]


class NotTried(RuntimeError):
    """A command not tried because the batch appended before its own failed whole."""


def settle(batch: list[Unit], error: BaseException | None) -> None:
    """Answer each caller of the batch; ``error`` for every command not settled yet."""
    for unit in batch:
        if error is not None:
            unit.results = [error if r is None else r for r in unit.results]
        if unit.future.done():
            continue
        lost = RuntimeError("the command was not settled")
        unit.future.set_result([lost if r is None else r for r in unit.results])


def settled_position(unit: Unit) -> Tracking | None:
    """A single command's tracking record goes with its success only; a batch's always."""
    if unit.batch or all(not isinstance(r, BaseException) for r in unit.results):
        return unit.tracking
    return None
