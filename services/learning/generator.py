"""The ProposalGenerator as the scheduler orders it: ``RaiseProposals(date, now)`` (C42–C47).

Daily at 06:00 UTC (and again at every tick of that day, and for a downtime's missed days:
the order is idempotent). Each run reads its settings afresh (C46, C47), reads the clusters
of evidence per (tenant, track, target asset) that are ready (``sources``), and for every
cluster with at least MinEvidenceItems items (C29) whose proposal does not exist yet: drafts
it (C44), stores the summary as an artifact (C06) and raises it through the command bus
under the service's identity, superseding the target's proposals on the same track still
Proposed (C34).

Idempotent (C43): a proposal's id derives from (tenant, target, evidence hash), so the same
evidence — a second run, a replay of the same neighbour events, a second scheduler at the
same time — names the same proposal, and the bus creates it once.

If the drafter is unavailable, that cluster waits: nothing is raised without a draft (C45),
and a later run raises it. Any other failure of a cluster (evidence the drafter cannot compute
with, a command the bus refuses, recorded evidence that no longer reads) is that cluster's
alone (``services.scheduling.failures``): recorded with its reason, and every other cluster —
every other tenant's — is raised in the same run; the next run tries it again. The retry is
fixed (C43): the scheduler orders the day's run again at every tick (hourly), and an order
that fails outright is tried at the next ticks. The generator never applies anything (C44,
C31).

Cost: a run reads only the clusters that changed since their last proposal and hold enough
evidence, from the evidence clusters read model (``sources``), once that read model has
applied the store's head: it grows with the new evidence, not with the history.
"""

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from uuid import UUID

import asyncpg

from contracts.learning import RaiseProposal
from services.bus.command_bus import CommandBus
from services.bus.issued import Issued
from services.followers.waiting import wait_for_position
from services.learning import sources
from services.learning.clusters import Cluster
from services.learning.domain import proposal_id_for
from services.learning.drafting import Drafter, DrafterUnavailable, drafter_for
from services.learning.settings import LearningSettings
from services.scheduling.failures import PROPOSALS, Failure, Unit, failed, isolated, settle
from services.scheduling.orders import RaiseProposals
from services.store.artifacts import put_artifact
from services.store.event_store import EventStore
from services.store.existing import existing

log = logging.getLogger(__name__)


class NotCaughtUp(RuntimeError):
    """The evidence clusters read model is behind the store's head."""


ACTOR = "system:proposals"
SUMMARY_MEDIA_TYPE = "text/markdown; charset=utf-8"


@dataclass(frozen=True)
class RunReport:
    """What a run did, for the log, the CLI and tests."""

    raised: list[UUID]
    existing: list[UUID]  # clusters whose proposal stands already
    waiting: list[str]  # ready clusters that wait for the drafter
    unavailable: str | None = None  # why the drafter could not draft, if it could not
    failed: list[Failure] = field(default_factory=list)  # clusters that failed, with why


class ProposalGenerator:
    def __init__(
        self,
        store: EventStore,
        bus: CommandBus,
        pool: asyncpg.Pool,
        *,
        settings: Callable[[], LearningSettings],
        drafter: Callable[[LearningSettings], Drafter] = drafter_for,
        wait_seconds: float = 60.0,
        schema: str = sources.READ_MODEL,
    ) -> None:
        self.store, self.bus, self.pool = store, bus, pool
        self.settings, self.drafter = settings, drafter
        self.wait_seconds, self.schema = wait_seconds, schema

    async def __call__(self, order: RaiseProposals) -> None:
        report = await self.run(order)
        log.info(
            "%s: %d raised, %d standing, %d waiting, %d failed%s",
            order.name,
            len(report.raised),
            len(report.existing),
            len(report.waiting),
            len(report.failed),
            f" (drafter unavailable: {report.unavailable})" if report.unavailable else "",
        )

    async def ready(
        self, min_items: int, order: RaiseProposals
    ) -> tuple[list[sources.Ready], list[Failure]]:
        """The ready clusters, and the failures of the targets whose evidence cannot be read
        (those are not raised this run: a part of a cluster raises nothing)."""
        await self.caught_up()
        ready, unreadable = await sources.ready_clusters(self.pool, min_items, schema=self.schema)
        first = {(u.tenant_id, u.unit): u.error for u in reversed(unreadable)}
        failures = [  # one per target, whatever the number of its rows that do not read
            failed(Unit(PROPOSALS, tenant, target, order.name), error)
            for (tenant, target), error in first.items()
        ]
        return ready, failures

    async def caught_up(self) -> None:
        """Wait until the evidence clusters have applied the store's head: a lagging read
        model would raise a proposal on part of a cluster, or one raised already. Still
        behind: the order fails loudly and the scheduler gives it again at the next tick."""
        head = await asyncio.to_thread(self.store.recorder.max_notification_id) or 0
        reached = await wait_for_position(self.pool, self.schema, head, self.wait_seconds)
        if reached < head:
            raise NotCaughtUp(f"{self.schema} is at {reached}, the store at {head}")

    async def run(self, order: RaiseProposals) -> RunReport:
        settings = self.settings()  # C46, C47: read at each run
        if settings.unparsed:
            log.warning(
                "learning: default used for %s (did not parse)", ", ".join(settings.unparsed)
            )
        drafter = self.drafter(settings)
        ready, failures = await self.ready(settings.min_evidence_items, order)
        ids = {
            r.cluster: proposal_id_for(
                r.cluster.tenant_id, r.cluster.target_asset_id, r.cluster.evidence_hash
            )
            for r in ready
        }
        standing = await asyncio.to_thread(existing, self.store, set(ids.values()))
        raised: list[UUID] = []
        kept: list[UUID] = []
        waiting: list[str] = []
        unavailable = None
        for found in ready:
            cluster = found.cluster
            unit_name = sources.unit_of(cluster.track, cluster.target_asset_id)
            name = f"{cluster.tenant_id}/{unit_name}"
            if ids[cluster] in standing:
                kept.append(ids[cluster])
                continue
            if unavailable is not None:
                waiting.append(name)  # the drafter failed this run already: do not hammer it
                continue
            unit = Unit(PROPOSALS, cluster.tenant_id, unit_name, order.name)
            outcome = await isolated(unit, partial(self.raise_or_wait, found, drafter, order))
            if isinstance(outcome, Failure):
                failures.append(outcome)  # this cluster's alone: the others go on (bulkhead)
            elif outcome is not None:
                unavailable = outcome
                log.warning(
                    "%s: drafter %s unavailable (%s): waits", name, drafter.profile, outcome
                )
                waiting.append(name)
            else:
                raised.append(ids[cluster])
        await settle(self.pool, PROPOSALS, failures)  # each run covers every cluster
        return RunReport(raised, kept, waiting, unavailable, failures)

    async def raise_or_wait(
        self, found: sources.Ready, drafter: Drafter, order: RaiseProposals
    ) -> str | None:
        """Raise the cluster's proposal; answers why the drafter could not draft, if so."""
        try:
            await self.raise_one(found.cluster, drafter, found.open_proposals, order)
        except DrafterUnavailable as error:
            return str(error)
        return None

    async def raise_one(
        self, cluster: Cluster, drafter: Drafter, open_proposals: Sequence[str],
        order: RaiseProposals,
    ) -> None:  # fmt: skip
        draft = await drafter.draft(cluster)  # raises DrafterUnavailable: nothing raised (C45)
        summary_ref = await put_artifact(
            self.pool, cluster.tenant_id, draft.summary.encode(), SUMMARY_MEDIA_TYPE
        )
        command = RaiseProposal(
            kind=cluster.kind,
            target_asset_id=cluster.target_asset_id,
            target_version=cluster.target_version,
            evidence_hash=cluster.evidence_hash,
            evidence=list(cluster.items),
            summary_ref=summary_ref,
            expected_effect=draft.expected_effect,
            profile=drafter.profile,
            # C34: the target's proposals on this track still Proposed
            supersedes=[UUID(p) for p in sorted(open_proposals)],
        )
        await self.bus.execute(
            Issued(
                command,
                tenant_id=cluster.tenant_id,
                actor=ACTOR,
                command_id=f"{order.name}/{cluster.target_asset_id}/{cluster.evidence_hash}",
                at=order.now,
                service=True,
            )
        )
