"""``Http``: what a context's routes need of the runtime — the command path, the read side,
the keys, the position seal and the clock — behind the methods the routes call."""

import hashlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from contracts.errors import Refused
from services.bus.asking import ASKING, door_now
from services.bus.command_bus import CommandBus
from services.bus.decisions import Outcome, Result
from services.bus.issued import Issued
from services.edge.auth import KeyRing, Principal
from services.edge.door_audit import noted
from services.edge.fast_lane import FastLane
from services.edge.key_refresh import KeyRefresher
from services.edge.positions import PositionSeal
from services.edge.problems import Forbidden
from services.edge.scopes import authorize, authorize_off_loop, holding, requiring
from services.edge.tokens import TokenVerifier
from services.edge.waits import wait_until_applied
from services.permissions.rules import READ_ALL

log = logging.getLogger(__name__)


@dataclass
class Http:
    """What routes need: the command path, the read side, the keys and the clock."""

    bus: CommandBus
    pool: Any
    keys: KeyRing
    read_wait_seconds: float
    positions: PositionSeal
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    lanes: list[FastLane] = field(default_factory=list)  # create_app routes them first
    # The trusted OAuth2 issuers' tokens, beside the keys (none configured: keys only).
    tokens: TokenVerifier | None = None
    # Stands ``keys`` on the store's keys and grants; None where nothing is served.
    refresher: KeyRefresher | None = None
    # The broker a parked inbound message is sent again to (None: served without Kafka).
    kafka: str | None = None

    def scope(self, required: str) -> Callable[..., Awaitable[Principal]]:
        """A dependency: the caller's principal, if its key holds ``required``."""
        return requiring(self.keys, required, self.tokens)

    def reading(
        self, required: str, roles: tuple[str, ...] = READ_ALL
    ) -> Callable[..., Awaitable[Principal]]:
        """A read route's dependency: the caller's principal, if its key holds the read scope
        ``required`` and one of ``roles`` (by default those that read all of the tenant; a
        Requester alone reads only their own, decisions D23)."""
        return requiring(self.keys, required, self.tokens, roles)

    def holding(self, roles: tuple[str, ...]) -> Callable[..., Awaitable[Principal]]:
        """A dependency: the caller's principal, if its key holds one of ``roles``."""
        return holding(self.keys, roles, self.tokens)

    def authorize(self, key: str | None, required: str | None) -> Principal:
        """The principal of an API key, if the key is known and holds ``required`` (None: any
        known key, where the scope needed is known only once the body is read)."""
        try:
            return noted(authorize(self.keys, key, required, self.tokens))
        except Forbidden as refused:
            noted(refused.principal)  # audited as a refusal at this door (decisions D110)
            raise

    async def authorized(
        self, key: str | None, required: str | None, *, widget: bool = False
    ) -> Principal:
        """``authorize`` for a route's coroutine: a token's keys are fetched off the loop.
        ``widget``: the route is the widget's, where a widget token passes (decisions D233)."""
        return await authorize_off_loop(self.keys, key, required, self.tokens, widget=widget)

    async def execute(
        self, command: BaseModel, principal: Principal, command_id: str, key: str | None = None
    ) -> Outcome:
        """Decide and append ``command``. With ``key`` (an Idempotency-Key on a route whose
        command has no id of its own to repeat by), the command is applied once under it: a
        repeat with the same request answers what it shows now, another request a 409."""
        identity = digest = None
        if key is not None:
            # The caller by digest: the receipt is kept in the log for good, and a person's id
            # must not outlive their erasure there (decisions D43).
            caller = hashlib.sha256(principal.subject.encode()).hexdigest()[:32]
            identity = f"http/{principal.tenant_id}/{caller}/{key}"
            said = f"{type(command).__name__}:{command.model_dump_json()}"
            digest = hashlib.sha256(said.encode()).hexdigest()
        issued = Issued(
            command,
            principal.tenant_id,
            principal.subject,
            command_id,
            self.clock(),
            identity=identity,
            service=principal.service,
            roles=principal.roles,
            digest=digest,
            door=door_now(),
        )
        return await self.bus.execute(issued)

    async def execute_all(
        self, commands: list[tuple[BaseModel, str]], principal: Principal
    ) -> list[Result]:
        """Decide ``(command, command id)`` pairs together and append their events in one
        transaction (the bus's batch); answers each one's Outcome or error, in order."""
        at, door = self.clock(), door_now()
        issued = [
            Issued(
                command,
                principal.tenant_id,
                principal.subject,
                command_id,
                at,
                service=principal.service,
                roles=principal.roles,
                door=door,
            )
            for command, command_id in commands
        ]
        return await self.bus.execute_batch(issued, None)

    def applied_here(self, what: str, decision_id: str) -> None:
        """The audit's row of a decision this door applied with no command (D235)."""
        audit, asked = getattr(self.bus, "audit", None), ASKING.get()
        if audit is not None and asked is not None:
            audit.granted(asked, self.clock(), what, decision_id)

    def position(self, outcome: Outcome, principal: Principal) -> str:
        """The ``position`` a write answers: its place in the log, sealed for its tenant."""
        return self.positions.seal(outcome.position, principal.tenant_id)

    def sealed(self, position: int | None, principal: Principal) -> str | None:
        """A read model's position as the API shows it (the order of a list, a cursor)."""
        if position is None:
            return None
        return self.positions.seal(position, principal.tenant_id)

    def cursor(self, before: str | None, principal: Principal) -> int | None:
        """``?before=``: the position in a cursor this tenant was given."""
        if before is None:
            return None
        return self.positions.open(before, principal.tenant_id, field="before")

    def sealed_key(self, listed: str, key: str | None, principal: Principal) -> str | None:
        """The ``next`` of a list ordered by something else than position (a date, a name):
        the last item's sort key, named for its list and sealed as positions are."""
        if key is None:
            return None
        return self.positions.seal_text(f"{listed}/{key}", principal.tenant_id)

    def opened_key(self, listed: str, before: str | None, principal: Principal) -> str | None:
        """``?before=`` of such a list: the sort key in a cursor this tenant was given for
        this list (one of another list is refused as a cursor of another tenant is)."""
        if before is None:
            return None
        text = self.positions.open_text(before, principal.tenant_id, field="before")
        name, _, key = text.partition("/")
        if name != listed:
            raise Refused("before is not a cursor of this list", field="before")
        return key

    async def keyed_page(
        self,
        listed: str,
        before: str | None,
        principal: Principal,
        fetch: Callable[[str | None], Awaitable[tuple[list[dict[str, Any]], Any]]],
    ) -> tuple[list[dict[str, Any]], str | None]:
        """A page of a list ordered by a key: ``fetch`` is given the key of ``?before=``
        (``opened_key``) and answers the page and its last key (None on the last page),
        which comes back sealed as the page's ``next`` (``sealed_key``)."""
        found, last = await fetch(self.opened_key(listed, before, principal))
        return found, self.sealed_key(listed, None if last is None else str(last), principal)

    def with_position(self, item: dict[str, Any], principal: Principal) -> dict[str, Any]:
        return {**item, "position": self.sealed(item["position"], principal)}

    async def keys_moved(self, outcome: Outcome) -> None:
        """A change of keys or grants is in this process's ring before it is answered, so
        the caller's next request meets it (decisions D29)."""
        if self.refresher is None:
            return
        if not await self.refresher.caught_up(outcome.position, self.read_wait_seconds):
            log.warning("keys: the ring is not at position %d yet", outcome.position)

    async def read_at(
        self, read_model: str, min_position: str | None, principal: Principal
    ) -> None:
        """Read-your-writes: wait until the read model has applied ``min_position``
        (``services.edge.waits``)."""
        if min_position is None:
            return
        await wait_until_applied(
            self.pool,
            self.positions,
            read_model,
            min_position,
            principal.tenant_id,
            self.read_wait_seconds,
        )
