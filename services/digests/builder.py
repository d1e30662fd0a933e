"""The weekly digest as the scheduler orders it: ``BuildDigest(week, now)`` (SPEC W104–W128).

For every tenant that has submitted reports, read the week's facts (bounded), build the tables
(a pure function), create the digest once and post it once. Both steps go through the command
bus under the service's identity (W109, W111): the digest's id derives from (tenant,
``digest/{week}``), so a second builder at the same time (two schedulers, a replica, a
restart) loses the create and finds the digest stamped, and nothing is posted twice.

Each tenant's digest is built in a bulkhead of its own (``services.scheduling.failures``): a
tenant whose digest fails — whatever the reason — is recorded with it, and every other
tenant's digest is built and posted in the same run; the scheduler gives the week again at
its next tick, and the failed one is tried again.
"""

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import asyncpg
from pydantic import BaseModel

from contracts.digests import BuildWeeklyDigest, PostWeeklyDigest
from contracts.weeks import due_at, end_of, previous, start_of
from services.bus.command_bus import CommandBus
from services.bus.decisions import Outcome
from services.bus.issued import Issued
from services.digests import sources
from services.digests.build import build
from services.digests.domain import digest_id_for
from services.digests.handlers import DigestState
from services.followers.waiting import wait_for_position
from services.scheduling.failures import DIGEST, Failure, Unit, isolated, settle
from services.scheduling.orders import BuildDigest
from services.store.event_store import EventStore
from services.store.existing import existing

log = logging.getLogger(__name__)

ACTOR = "system:digest"
PAGE_BOUND = 200  # SPEC W112


class NotCaughtUp(RuntimeError):
    """A read model the digest reads is behind the store's head: building now would count
    less than was submitted. The order fails loudly and is given again."""


@dataclass(frozen=True)
class Built:
    tenant_id: str
    digest: DigestState
    posted: DigestState


class DigestBuilder:
    def __init__(
        self,
        store: EventStore,
        bus: CommandBus,
        pool: asyncpg.Pool,
        *,
        instance: str,
        routes: Callable[[str], Sequence[str]],
        public_url: str = "",
        page_bound: int = PAGE_BOUND,
        wait_seconds: float = 60.0,
        inbox: str = sources.INBOX,
        cases: str = sources.EVAL_CASES,
    ) -> None:
        self.store, self.bus, self.pool = store, bus, pool
        self.instance, self.routes = instance, routes
        self.public_url = public_url.rstrip("/")
        self.page_bound, self.wait_seconds = page_bound, wait_seconds
        self.inbox, self.cases = inbox, cases

    async def __call__(self, order: BuildDigest) -> None:
        """For every tenant that has submitted reports (ever): build the digest of
        ``order.week`` once and post it once."""
        await self.run(order)

    async def run(self, order: BuildDigest) -> list[Built]:
        """The digests built (or found) and posted; a tenant whose digest failed is left out,
        its failure recorded, and the others go on."""
        if order.now < due_at(order.week):  # W106: a week is read only once it is over
            raise ValueError(f"the digest of {order.week} is not due before {due_at(order.week)}")
        await self.caught_up()
        done: list[Built] = []
        failures: list[Failure] = []
        for tenant in await sources.tenants_with_reports(self.pool, schema=self.inbox):
            unit = Unit(DIGEST, tenant, order.week, order.name)
            outcome = await isolated(unit, partial(self.build_for, tenant, order))
            if isinstance(outcome, Failure):
                failures.append(outcome)
            else:
                done.append(outcome)
        await settle(self.pool, DIGEST, failures, order=order.name)
        return done

    async def caught_up(self) -> None:
        """Wait until the Inbox and the eval cases have applied everything in the store now."""
        head = await asyncio.to_thread(self.store.recorder.max_notification_id) or 0
        for reader in (self.inbox, self.cases):
            reached = await wait_for_position(self.pool, reader, head, self.wait_seconds)
            if reached < head:
                raise NotCaughtUp(f"{reader} is at {reached}, the store at {head}")

    async def build_for(self, tenant_id: str, order: BuildDigest) -> Built:
        week = order.week
        built = None
        # Every tick orders the latest week again (due and not yet recorded): a digest that
        # stands already is not read and built a second time, only its post is made sure of.
        if not await asyncio.to_thread(existing, self.store, {digest_id_for(tenant_id, week)}):
            built = await self.build(tenant_id, order)
        url = self.public_url + digest_url(week)
        routes = list(self.routes(tenant_id))  # each tenant's: its tracker is one (decisions D150)
        post = PostWeeklyDigest(week=week, instance=self.instance, url=url, routes=routes)
        posted = await self.bus.execute(self.issued(post, tenant_id, f"{order.name}/post", order))
        return Built(tenant_id, (built or posted).result, posted.result)

    async def build(self, tenant_id: str, order: BuildDigest) -> Outcome:
        week = order.week
        # SPEC §3.9: the week and the one before (the trend) in one bounded read.
        reports = await sources.submitted_reports(
            self.pool,
            tenant_id,
            start_of(previous(week)[0]),
            end_of(week),
            bound=self.page_bound,
            schema=self.inbox,
        )
        cases = await sources.eval_cases(self.pool, tenant_id, schema=self.cases)
        tables = build(week, reports, cases, bound=self.page_bound)
        if tables.truncated:
            log.warning("digest %s of %s: truncated at %d reports", week, tenant_id, tables.bound)
        command = self.issued(
            BuildWeeklyDigest(tables=tables), tenant_id, f"{order.name}/build", order
        )
        return await self.bus.execute(command)

    @staticmethod
    def issued(command: BaseModel, tenant_id: str, command_id: str, order: BuildDigest) -> Issued:
        return Issued(
            command,
            tenant_id=tenant_id,
            actor=ACTOR,
            command_id=command_id,
            at=order.now,
            service=True,
        )


def digest_url(week: str) -> str:
    """The digest's address in this service's API (W125), below ``FEEDBACKLOOP_PUBLIC_URL``."""
    return f"/factory/feedback/digests/{week}"
