"""What a handler answers the bus (``Decision``), what the bus answers its caller
(``Outcome``), and the shapes of the functions a context registers with the bus."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate

from services.bus.issued import Issued
from services.store.event_store import EventStore


@dataclass
class Decision:
    """What a handler decided: aggregates with pending events, and the answer for the caller.

    Not frozen: the bus puts the receipt on the handler's fresh answer (``Deciding.decide``),
    and a frozen dataclass's ``__init__`` costs several times a plain one's on a path taken
    for every command."""

    aggregates: list[Aggregate]
    result: Any
    committed: Callable[[], None] | None = None  # runs once the events are stored
    receipt: Any = None  # the command's Receipt.Recorded event, appended after the aggregates
    # The first events of new aggregates the handler did not build (building the aggregate
    # only to collect its event again is most of the cost of such a decision); appended after
    # ``aggregates``' events, as they are.
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
