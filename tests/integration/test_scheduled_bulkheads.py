"""Scheduled work in bulkheads, on a real PostgreSQL: one tenant's failing cluster, digest or
night is recorded with its reason, shown in the scheduler's status and in the metrics (by job,
never by tenant), retried at the next tick, and every other tenant's share of the same run is
done. Each failure is provoked below the doors — evidence stored as it is, or a tenant whose
share raises — so the bulkhead holds for a failure no door foresaw.
"""

import asyncio
import uuid
from datetime import date, timedelta
from typing import Any

import asyncpg
import pytest
from prometheus_client import REGISTRY, generate_latest

from contracts.learning import EvidenceItem, EvidenceOrigin
from services.digests.builder import Built, DigestBuilder
from services.digests.domain import digest_id_for
from services.followers.waiting import wait_for_position
from services.learning.domain import LearningProposal
from services.learning.evidence import Evidence
from services.nightly.runner import NightlyRunner
from services.processes.bootstrap import Runtime
from services.processes.read_model_gauges import refresh
from services.scheduling.failures import (
    DIGEST,
    Failure,
    Unit,
    isolated,
    recorded_failures,
    settle,
)
from services.scheduling.failures import NIGHT as NIGHT_JOB
from services.scheduling.orders import BuildDigest, PlanNight
from services.scheduling.scheduler import Scheduler
from services.store.existing import existing
from tests.conftest import Keys
from tests.integration.test_datasets import tenant_of
from tests.integration.test_digest import MONDAY, ORDER, submit
from tests.integration.test_learning import (
    NOW,
    failed_evaluation,
    generator,
    neighbour,
)
from tests.integration.test_learning import (
    ORDER as PROPOSALS_ORDER,
)
from tests.integration.test_nightly import NIGHT, Door, confirmed_case, door, runner, standin
from tests.integration.test_scheduler import Clock, Orders

__all__ = ["door", "standin"]  # the nightly tests' fixtures, used here too

DRIFTING = "agent-drifting"


async def record_overflowing_drift(runtime: Runtime, tenant: str, n: int) -> None:
    """A DriftDetected of ``baseline 1.7e308, observed -1.7e308`` as the store holds it: the
    means of three overflow. Stored below the door, as evidence recorded before a door refused
    such values would be (``model_construct``: no contract checks it on the way in)."""
    item = EvidenceItem.model_construct(
        evidence_id=f"drift:d-{n}",
        origin=EvidenceOrigin.drift,
        metric="accuracy",
        value=-1.7e308,
        baseline=1.7e308,
        note="accuracy drifted",
        serves=(),
        observed_at=NOW - timedelta(hours=n),
    )
    evidence = Evidence.record(
        tenant_id=tenant,
        target_asset_id=DRIFTING,
        target_kind="agent",
        target_version="v1",
        counts=True,
        item=item,
        at=NOW,
    )
    await asyncio.to_thread(runtime.store.save, evidence)


def failures_counted(job: str) -> float:
    value = REGISTRY.get_sample_value("feedbackloop_scheduled_failures_total", {"job": job})
    return value or 0.0


def failing_now(job: str) -> float | None:
    return REGISTRY.get_sample_value("feedbackloop_scheduled_failing", {"job": job})


async def scheduler_incidents(runtime: Runtime) -> tuple[str, bool]:
    """The scheduler's incidents as the status shows them, and whether it is ok (ready)."""
    [report] = await runtime.health(only=["scheduler"])
    assert "failing" not in report.state  # an incident, not a state
    return "; ".join(report.incidents), report.ok


async def test_an_overflowing_cluster_fails_alone_and_every_other_tenant_s_proposal_is_raised(
    runtime: Runtime, keys: Keys
) -> None:
    """Item 3 (SPEC C42, C43): the daily proposal run. Tenant A sorts before tenant B, so
    before the bulkhead A's overflow stopped B's proposal, every day."""
    runtime.start_projections(["learning_proposals"])
    a, b = tenant_of(keys, 0), tenant_of(keys, 1)
    assert a < b
    for n in range(3):
        await record_overflowing_drift(runtime, a, n)
        await neighbour(runtime, b, failed_evaluation(n), f"ce-b-{n}")
    clock = Clock(NOW.replace(tzinfo=None).isoformat())
    scheduler = Scheduler(
        runtime.pool, None, None, night_hour=None, proposals=generator(runtime), clock=clock
    )
    counted = failures_counted("proposals")

    ordered = await scheduler.tick()

    assert "proposals/2026-11-30" in [o.name for o in ordered]
    raised = [
        e for e in runtime.store.recorder.select_notifications(start=1, limit=1000)
        if e.topic.endswith("LearningProposal.Raised")
    ]  # fmt: skip
    assert len(raised) == 1
    proposal: LearningProposal = runtime.store.repository.get(raised[0].originator_id)
    assert proposal.tenant_id == b  # B's proposal, in the same run
    # The drift's two clusters (improvement and re-evaluation, C40) fail, A's alone.
    failures = await recorded_failures(runtime.pool)
    assert sorted((f["job"], f["tenant_id"], f["unit"], f["attempts"]) for f in failures) == [
        ("proposals", a, DRIFTING, 1), ("proposals", a, f"re-evaluation:{DRIFTING}", 1),
    ]  # fmt: skip
    assert all(str(f["reason"]).startswith("OverflowError") for f in failures)
    incidents, ok = await scheduler_incidents(runtime)
    assert incidents == "units failing, tried again at every tick: proposals 2 (OverflowError)"
    assert ok  # one tenant's failure does not make the scheduler (or /readyz) unready
    readiness = await runtime.readiness()
    assert readiness["status"] == "ok"
    assert readiness["degraded"] is True
    assert readiness["incidents"] == {"scheduler": [incidents]}
    assert failures_counted("proposals") == counted + 2
    await refresh(runtime.pool)
    assert failing_now("proposals") == 2
    assert a not in generate_latest().decode()

    # The next tick runs it again: A is tried again (and fails again), B's stands.
    clock.set((NOW + timedelta(hours=1)).replace(tzinfo=None).isoformat())
    await scheduler.tick()
    again = await recorded_failures(runtime.pool)
    assert [f["attempts"] for f in again] == [2, 2]
    assert failures_counted("proposals") == counted + 4


async def test_a_read_model_row_that_does_not_read_as_evidence_fails_only_its_target(
    runtime: Runtime, keys: Keys
) -> None:
    """Item 3 (SPEC C28): evidence of tenant A whose row no one foresaw (its note is not
    text) fails A's agent's cluster alone; B's proposal is raised."""
    runtime.start_projections(["learning_proposals"])
    a, b = tenant_of(keys, 0), tenant_of(keys, 1)
    for n in range(3):
        await neighbour(runtime, b, failed_evaluation(n), f"ce-b-{n}")
    head = await asyncio.to_thread(runtime.store.recorder.max_notification_id) or 0
    assert await wait_for_position(runtime.pool, "rm_learning_proposals", head, 30) >= head
    item = (
        '{"evidenceId": "eval-run:%d", "origin": "eval-case-failure", "note": [1, 2], '
        '"observedAt": "2026-11-30T06:00:00Z"}'
    )
    for n in range(3):
        await runtime.pool.execute(
            "INSERT INTO rm_learning_proposals.evidence (tenant_id, track, evidence_id, "
            "target_asset_id, target_kind, item) VALUES ($1, 'improvement', $2, "
            "'Office_Coach', 'agent', $3)",
            a, f"eval-run:{n}", item % n,
        )  # fmt: skip
    await runtime.pool.execute(
        "INSERT INTO rm_learning_proposals.clusters (tenant_id, track, target_asset_id, unspent, "
        "version) VALUES ($1, 'improvement', 'Office_Coach', 3, 3)",
        a,
    )

    report = await generator(runtime).run(PROPOSALS_ORDER)

    assert len(report.raised) == 1
    [failure] = await recorded_failures(runtime.pool)
    assert (failure["tenant_id"], failure["unit"]) == (a, "Office_Coach")
    assert str(failure["reason"]).startswith("ValidationError")


class BreakingDigests(DigestBuilder):
    """The digest builder, with the tenants in ``broken`` raising an error no door foresaw."""

    broken: set[str]

    async def build_for(self, tenant_id: str, order: BuildDigest) -> Built:
        if tenant_id in self.broken:
            raise ZeroDivisionError(f"a digest that cannot be built ({order.week})")
        return await super().build_for(tenant_id, order)


async def test_a_failing_digest_is_one_tenant_s_and_is_built_at_the_next_tick(
    runtime: Runtime, keys: Keys
) -> None:
    """Item 3 (SPEC W104–W111): tenant A's digest fails, B's is built and posted in the same
    run; A's failure is recorded, shown and counted; the next tick builds A's and clears it."""
    runtime.start_projections(["inbox", "eval_cases"])
    a, b = tenant_of(keys, 0), tenant_of(keys, 1)
    await submit(runtime, a, MONDAY + timedelta(days=1))
    await submit(runtime, b, MONDAY + timedelta(days=1))
    builder = BreakingDigests(
        runtime.store,
        runtime.bus,
        runtime.pool,
        instance="test",
        routes=lambda _: [],
        wait_seconds=20,
    )
    builder.broken = {a}
    clock = Clock(ORDER.now.replace(tzinfo=None).isoformat())
    scheduler = Scheduler(runtime.pool, None, builder, night_hour=None, clock=clock)
    counted = failures_counted(DIGEST)

    await scheduler.tick()

    def digest_of(tenant: str) -> bool:
        return bool(existing(runtime.store, {digest_id_for(tenant, ORDER.week)}))

    assert digest_of(b)
    assert not digest_of(a)
    [failure] = await recorded_failures(runtime.pool)
    assert (failure["job"], failure["tenant_id"], failure["unit"]) == (DIGEST, a, ORDER.week)
    assert failure["reason"] == f"ZeroDivisionError: a digest that cannot be built ({ORDER.week})"
    incidents, ok = await scheduler_incidents(runtime)
    assert "digest 1 (ZeroDivisionError)" in incidents
    assert ok
    assert failures_counted(DIGEST) == counted + 1

    builder.broken.clear()  # whatever it was, it is gone
    clock.set((ORDER.now + timedelta(hours=1)).replace(tzinfo=None).isoformat())
    await scheduler.tick()
    assert digest_of(a)
    assert await recorded_failures(runtime.pool) == []
    incidents, _ = await scheduler_incidents(runtime)
    assert incidents == ""


async def test_an_order_with_a_failing_unit_is_given_again_though_no_longer_due(
    runtime: Runtime,
) -> None:
    """Item 3: a failing unit of an older week (caught up after a downtime) is retried at the
    next tick, though only the latest week falls due then; one older than a downtime is caught
    up for (a week of nights) is struck off instead."""
    old = "digest/2026-W40"
    unit = Unit(DIGEST, "tenant-x", "2026-W40", old)
    await settle(runtime.pool, DIGEST, [Failure(unit, "RuntimeError: broken")], order=old)
    stale = Unit(NIGHT_JOB, "tenant-x", "2026-10-01", "night/2026-10-01")
    failure = Failure(stale, "RuntimeError: broken")
    await settle(runtime.pool, NIGHT_JOB, [failure], order=stale.order)
    orders = Orders()
    scheduler = Scheduler(
        runtime.pool, orders, orders, night_hour=1, clock=Clock("2026-11-22T12:00:00")
    )
    await scheduler.tick()
    assert orders.given == ["digest/2026-W46", "night/2026-11-22", old]
    assert [f["order_name"] for f in await recorded_failures(runtime.pool)] == [old]


class BreakingNights(NightlyRunner):
    """The nightly runner, with the tenants in ``broken`` raising as their night is planned."""

    broken: set[str]

    async def plan(self, tenant: str, order: PlanNight) -> None:
        if tenant in self.broken:
            raise ZeroDivisionError("a night that cannot be planned")
        await super().plan(tenant, order)


def breaking_nights(door: Door, broken: set[str]) -> BreakingNights:
    plain = runner(door, None)
    nights = BreakingNights(
        plain.store, plain.bus, plain.pool, plain.cases, plain.settings, read_wait_seconds=30
    )
    nights.broken = broken
    return nights


async def test_a_tenant_whose_night_fails_leaves_the_other_nights_and_is_planned_next_tick(
    door: Door,
) -> None:
    """Item 3 (SPEC W78–W92): tenant A's night fails as it is planned; B's night is planned
    and driven to its end in the same run; the next tick — a day later, when that night is no
    longer due — plans and ends A's."""
    runtime, keys = door.runtime, door.keys
    a, b = tenant_of(keys, 0), tenant_of(keys, 1)
    await confirmed_case(door, "Welchen Stundenansatz verrechne ich? (A)")
    await confirmed_case(door, "Welchen Stundenansatz verrechne ich? (B)", key=keys.b)
    nights = breaking_nights(door, {a})
    clock = Clock("2026-11-29T01:00:00")
    scheduler = Scheduler(runtime.pool, nights, None, night_hour=1, clock=clock)
    counted = failures_counted("night")

    await scheduler.tick()

    night = await nights_of(runtime)
    assert night == {b: "Warning"}  # ended: its case was skipped (no agent configured here)
    [failure] = await recorded_failures(runtime.pool)
    assert (failure["job"], failure["tenant_id"], failure["unit"], failure["order_name"]) == (
        "night", a, NIGHT, f"night/{NIGHT}",
    )  # fmt: skip
    assert failure["reason"] == "ZeroDivisionError: a night that cannot be planned"
    incidents, ok = await scheduler_incidents(runtime)
    assert "night 1 (ZeroDivisionError)" in incidents
    assert ok
    assert failures_counted("night") == counted + 1

    nights.broken.clear()
    clock.set("2026-11-30T00:30:00")  # before the next night is due: only the retry runs
    await scheduler.tick()
    assert await nights_of(runtime) == {a: "Warning", b: "Warning"}
    assert await recorded_failures(runtime.pool) == []


async def nights_of(runtime: Runtime) -> dict[str, Any]:
    """The nights of NIGHT that ended, by tenant, with their status."""
    head = await asyncio.to_thread(runtime.store.recorder.max_notification_id) or 0
    await wait_for_position(runtime.pool, "rm_nights", head, 20)
    rows = await runtime.pool.fetch(
        "SELECT tenant_id, status FROM rm_nights.nights "
        "WHERE date = $1 AND finished_at IS NOT NULL",
        date.fromisoformat(NIGHT),
    )
    return {row["tenant_id"]: row["status"] for row in rows}


async def test_a_full_postgresql_during_a_unit_is_no_tenants_failure(runtime: Runtime) -> None:
    """PostgreSQL refusing a connection as a full server does ("too many clients", 53300) is
    the surroundings': the unit raises it for the scheduler to retry the order, and nothing
    is recorded against the tenant."""
    role = f"full_{uuid.uuid4().hex[:8]}"
    await runtime.pool.execute(f"CREATE ROLE {role} LOGIN CONNECTION LIMIT 0")
    try:
        unit = Unit(DIGEST, "tenant-a", "2026-W48", "digest/2026-W48")
        with pytest.raises(asyncpg.TooManyConnectionsError):
            await isolated(unit, lambda: asyncpg.connect(runtime.database_url, user=role))
    finally:
        await runtime.pool.execute(f"DROP ROLE {role}")
    assert await recorded_failures(runtime.pool) == []
