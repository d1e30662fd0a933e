"""What a door is being asked while it answers (decisions D110): which door, which operation,
the caller once known, and what the command bus decided meanwhile.

Every door opens one ``asking`` around a request (the HTTP app's middleware around each
request, the gRPC method around its call). The door's rule checks name the caller here as
soon as it is known, the bus notes what it decided; when the door refuses, the audit reads
this to write the refusal's one row (``AuditTrail.refused``), unless the bus decided the
request and so wrote its row already: one decision, one row, whichever side refused.

A context variable, so that the rule checks deep in a route reach it without a parameter
threaded through every route; each request (and each gRPC call) runs in a task of its own or
opens an ``asking`` of its own, so nothing of one request is seen by another.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass
class Caller:
    """Who asks: a key's or a token's principal as the audit names it."""

    tenant_id: str
    actor: str
    roles: frozenset[str]
    service: bool


@dataclass
class Asking:
    """One request at one door. ``asked``: the operation (a route's method and path template,
    a gRPC method's full name), never a body nor a path's values: those may hold what a
    person asked to have erased."""

    door: str
    asked: str = ""
    caller: Caller | None = None
    decided_by_bus: bool = False
    refusal: str | None = None  # the error code a door's own check refused with
    audited: bool = False

    def refused_here(self) -> bool:
        """Whether the door itself refused a known caller, and no row says so yet."""
        return self.caller is not None and not self.decided_by_bus and not self.audited


ASKING: ContextVar[Asking | None] = ContextVar("asking", default=None)


@contextmanager
def asking(door: str, asked: str = "") -> Iterator[Asking]:
    """An ``Asking`` for the code run inside, and the tasks it starts."""
    current = Asking(door, asked)
    token = ASKING.set(current)
    try:
        yield current
    finally:
        ASKING.reset(token)


def caller_known(caller: Caller) -> None:
    if (current := ASKING.get()) is not None:
        current.caller = caller


def refused_as(code: str) -> None:
    """A door's own check refused, with this error code (the row's reason)."""
    if (current := ASKING.get()) is not None and current.refusal is None:
        current.refusal = code


def bus_decided() -> None:
    """The bus takes commands of this request: the request's rows are the bus's."""
    if (current := ASKING.get()) is not None:
        current.decided_by_bus = True


def door_now() -> str | None:
    """The door the running code answers at, if any (stamped on the commands it issues)."""
    current = ASKING.get()
    return None if current is None else current.door
