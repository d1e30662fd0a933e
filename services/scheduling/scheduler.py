"""The scheduler: turns wall-clock time into orders, and does nothing else.

Each tick (hourly, SPEC W79, W105) it reads the previous tick from PostgreSQL, works out which
orders fell due in between (``services.scheduling.due``: pure, tested with given times) and
hands them over in the order they fell due: ``PlanNight`` to the nightly runner,
``BuildDigest`` to the digest builder, ``RaiseProposals`` to the proposal generator (SPEC C42:
daily at 06:00 UTC).
A downtime spanning several due times catches every one of them up, in order, once. Orders
name things with deterministic ids, so a second scheduler, a replica or a restart that hands
over the same order again creates nothing.

An order that fails is tried again at the next ticks (the tick is saved just before it, so
everything after it is ordered again too, and finds itself done); after ``MAX_ATTEMPTS`` it is
given up, logged, and shown by ``feedbackloop status`` until ordered by hand
(``feedbackloop scheduler --order night/2026-11-29``). A failure of the surroundings
(PostgreSQL away) is not the order's: the supervisor restarts the scheduler with backoff.

Each job handles every tenant's share of an order on its own (``services.scheduling.failures``):
a unit that fails is recorded, and the order still goes through for the others. At every tick
the scheduler gives again every order that has a failing unit, so it is tried at the next run.

The scheduler heartbeats like every reader (``services.followers.heartbeats``), so
``feedbackloop status`` and ``/readyz`` show it: its state, the orders pending (its lag) and
those given up. The units failing are shown in its state, per job (how many, and the latest
kind of error — never a tenant's id, since ``/readyz`` asks for no key); they are no problem
of the instance's: one tenant's failing digest must not take the service out of the load balancer.
"""

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol

import asyncpg

from services.bus.asking import asking
from services.followers.heartbeats import Beat, beat, beating
from services.followers.reader import Connection
from services.followers.status import ReaderStatus
from services.followers.transient import is_transient
from services.permissions.doors import SCHEDULED
from services.scheduling.due import (
    PROPOSAL_HOUR,
    RETENTION_HOUR,
    due,
    due_time,
    parse_order,
    too_old,
)
from services.scheduling.failures import (
    SCHEDULER,
    failing_orders,
    forget_order,
)
from services.scheduling.failures import ensure_table as ensure_failures_table
from services.scheduling.orders import (
    AppraiseClosures,
    BuildDigest,
    ExpireOldText,
    Order,
    PlanNight,
    RaiseProposals,
)

log = logging.getLogger(__name__)

NAME = SCHEDULER
DOOR = SCHEDULED.name  # as the audit names the door of the commands its orders issue
MAX_ATTEMPTS = 3  # ticks an order is tried at before it is given up

DDL = """
CREATE TABLE IF NOT EXISTS scheduler_ticks (
    name text PRIMARY KEY,
    tick timestamptz,
    attempts jsonb NOT NULL DEFAULT '{}',
    given_up jsonb NOT NULL DEFAULT '{}'
);
"""


class Nights(Protocol):
    async def __call__(self, order: PlanNight) -> None: ...

    async def resume(self) -> None:
        """Drive every night still running (a process died mid-night) to its end."""


Digests = Callable[[BuildDigest], Awaitable[None]]
Proposals = Callable[[RaiseProposals], Awaitable[None]]
Retention = Callable[[ExpireOldText], Awaitable[None]]
Closures = Callable[[AppraiseClosures], Awaitable[None]]


async def ensure_tables(conn: Connection) -> None:
    await conn.execute(DDL)
    await ensure_failures_table(conn)


class Scheduler:
    name = NAME

    def __init__(
        self,
        pool: asyncpg.Pool,
        nights: Nights | None,
        digests: Digests | None,
        *,
        night_hour: int | None,
        proposals: Proposals | None = None,
        retention: Retention | None = None,
        closures: Closures | None = None,
        tick_seconds: float = 3600.0,
        heartbeat: float = 5.0,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.pool, self.nights, self.digests = pool, nights, digests
        self.proposals = proposals
        self.retention = retention
        self.closures = closures
        self.night_hour = night_hour if nights is not None else None
        self.tick_seconds, self.heartbeat, self.clock = tick_seconds, heartbeat, clock
        self.status = ReaderStatus(NAME)
        self.pending = 0

    async def run(self, stop: asyncio.Event) -> None:
        """Tick now and then at every ``tick_seconds`` boundary, until stopped."""
        beats = asyncio.create_task(
            beating(
                self.pool,
                NAME,
                lambda: Beat(self.status.state, self.pending),
                self.status.changed,
                every=self.heartbeat,
                stop=stop,
            )
        )
        try:
            while not stop.is_set():
                await self.tick()
                wait = self.tick_seconds - self.clock().timestamp() % self.tick_seconds
                self.status.say(f"waiting for the next tick (in {wait:.0f} s)")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), timeout=wait)
        finally:
            beats.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beats

    async def tick(self) -> list[Order]:
        """Hand over every order that fell due since the previous tick; answers them."""
        now = self.clock()
        row = await self.pool.fetchrow(
            "SELECT tick, attempts, given_up FROM scheduler_ticks WHERE name = $1", NAME
        )
        previous_tick = row["tick"] if row else None
        attempts: dict[str, int] = json.loads(row["attempts"]) if row else {}
        given_up = json.loads(row["given_up"]) if row else {}  # ordered by hand only, now
        orders = [
            order
            for order in due(
                previous_tick,
                now,
                night_hour=self.night_hour,
                proposal_hour=PROPOSAL_HOUR if self.proposals is not None else None,
                retention_hour=RETENTION_HOUR if self.retention is not None else None,
                closures=self.closures is not None,
            )
            if order.name not in given_up
        ]
        retried = await self.retries(orders, given_up, now)
        self.pending = len(orders) + len(retried)
        saved = now
        for order in orders:
            if await self.carry_out(order, attempts):
                self.pending -= 1
            elif order.name in attempts:  # not given up: tried again at the next tick,
                # and everything after it with it
                saved = min(saved, due_time(order, self.night_hour or 0) - timedelta(seconds=1))
        for order in retried:  # given again while a unit of theirs fails: no tick to hold
            if await self.carry_out(order, attempts):
                self.pending -= 1
        orders += retried
        if self.nights is not None:
            self.status.say("resuming nights left running")
            await self.nights.resume()
        await self.pool.execute(
            "INSERT INTO scheduler_ticks (name, tick, attempts) "
            "VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE "
            "SET tick = $2, attempts = $3",
            NAME, saved, json.dumps(attempts),
        )  # fmt: skip
        await beat(
            self.pool, NAME, Beat(self.status.state, self.pending)
        )  # a tick is a sign of life
        return orders

    async def retries(
        self, due_now: list[Order], given_up: dict[str, str], now: datetime
    ) -> list[Order]:
        """The orders with a failing unit that are not due anyway: given again, once each
        of the others is (a failing unit is one tenant's, it holds back no one)."""
        names = {order.name for order in due_now} | set(given_up)
        # A proposals run covers every cluster, whatever its day: one due now retries them.
        proposals_due = any(isinstance(order, RaiseProposals) for order in due_now)
        retried: list[Order] = []
        for name in await failing_orders(self.pool):
            if name in names or (proposals_due and name.startswith("proposals/")):
                continue
            try:
                order = parse_order(name, now)
            except ValueError:
                log.warning("a failing unit names an order this scheduler does not know: %s", name)
                continue
            if isinstance(order, PlanNight) and self.night_hour is None:
                continue  # nights are off here: their failing units wait until they are on
            if too_old(order, now):
                log.warning("%s: its failing units are no longer retried (too old)", name)
                await forget_order(self.pool, name)
                continue
            retried.append(order)
        return retried

    async def carry_out(self, order: Order, attempts: dict[str, int]) -> bool:
        """Hand one order over; answers whether it went through. A failure of the
        surroundings raises (the supervisor restarts the scheduler); any other is counted."""
        self.status.say(f"ordering {order.name}")
        try:
            # The commands it issues name their door in the audit (decisions D110).
            with asking(DOOR, type(order).__name__):
                await self.hand_over(order)
        except Exception as error:
            if is_transient(error):
                raise
            tries = attempts[order.name] = attempts.get(order.name, 0) + 1
            if tries >= MAX_ATTEMPTS:
                log.exception(
                    "%s failed %d times: given up; order it again with "
                    "`feedbackloop scheduler --order %s`",
                    order.name, tries, order.name,
                )  # fmt: skip
                attempts.pop(order.name)
                await self.give_up(order, f"{type(error).__name__}: {error}")
            else:
                log.exception(
                    "%s failed (attempt %d): tried again at the next tick", order.name, tries
                )
            return False
        attempts.pop(order.name, None)
        await self.pool.execute(
            "UPDATE scheduler_ticks SET given_up = given_up - $2 WHERE name = $1", NAME, order.name
        )
        log.info("%s: done", order.name)
        return True

    async def hand_over(self, order: Order) -> None:
        """The order to the one who carries it out."""
        if isinstance(order, PlanNight):
            assert self.nights is not None
            await self.nights(order)
        elif isinstance(order, RaiseProposals):
            if self.proposals is not None:
                await self.proposals(order)
        elif isinstance(order, ExpireOldText):
            if self.retention is not None:
                await self.retention(order)
        elif isinstance(order, AppraiseClosures):
            if self.closures is not None:
                await self.closures(order)
        elif self.digests is not None:
            await self.digests(order)

    async def give_up(self, order: Order, reason: str) -> None:
        await self.pool.execute(
            "INSERT INTO scheduler_ticks (name, given_up) "
            "VALUES ($1, jsonb_build_object($2::text, $3::text)) ON CONFLICT (name) DO UPDATE "
            "SET given_up = scheduler_ticks.given_up || jsonb_build_object($2::text, $3::text)",
            NAME, order.name, reason,
        )  # fmt: skip
