"""The scheduler on a real PostgreSQL: ticks remembered across restarts, missed due
times caught up in order and once, a failing order tried again and then given up and shown by
status, and its heartbeat read as a reader's."""

import asyncio
from datetime import UTC, datetime

from services.bus.asking import door_now
from services.processes.bootstrap import Runtime
from services.scheduling.due import parse_order
from services.scheduling.orders import BuildDigest, PlanNight
from services.scheduling.scheduler import DOOR, MAX_ATTEMPTS, Scheduler


class Orders:
    """The nightly runner's and the digest builder's stand-in: keeps the orders it carried out
    for the first time in ``given`` (a done one does nothing, as with deterministic ids), and
    fails the names in ``failing``."""

    def __init__(self) -> None:
        self.given: list[str] = []
        self.done: set[str] = set()
        self.failing: set[str] = set()
        self.resumed = 0
        self.doors: list[str | None] = []

    async def __call__(self, order: PlanNight | BuildDigest) -> None:
        if order.name in self.done:
            return
        self.given.append(order.name)
        self.doors.append(door_now())  # the door its commands would name in the audit
        if order.name in self.failing:
            raise RuntimeError(f"{order.name} is broken")
        self.done.add(order.name)

    async def resume(self) -> None:
        self.resumed += 1


class Clock:
    def __init__(self, now: str) -> None:
        self.set(now)

    def set(self, now: str) -> None:
        self.now = datetime.fromisoformat(now).replace(tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def scheduler_of(runtime: Runtime, orders: Orders, clock: Clock) -> Scheduler:
    return Scheduler(runtime.pool, orders, orders, night_hour=1, clock=clock)


async def test_a_restart_after_a_downtime_catches_up_every_due_time_in_order_once(
    runtime: Runtime,
) -> None:
    orders, clock = Orders(), Clock("2026-11-22T12:00:00")
    await scheduler_of(runtime, orders, clock).tick()
    assert orders.given == ["digest/2026-W46", "night/2026-11-22"]

    # Down from Sunday noon to Tuesday noon; a new process (a new scheduler) takes over.
    orders.given.clear()
    clock.set("2026-11-24T12:00:00")
    await scheduler_of(runtime, orders, clock).tick()
    assert orders.given == ["night/2026-11-23", "digest/2026-W47", "night/2026-11-24"]

    orders.given.clear()
    await scheduler_of(runtime, orders, clock).tick()
    assert orders.given == []
    assert orders.resumed == 3  # every tick drives nights left running to their end
    # The commands an order issues name the scheduled door in the audit (decisions D110).
    assert set(orders.doors) == {DOOR} == {"scheduled"}


async def test_a_failing_order_is_tried_at_the_next_ticks_then_given_up_and_shown(
    runtime: Runtime,
) -> None:
    orders, clock = Orders(), Clock("2026-11-22T12:00:00")
    orders.failing.add("night/2026-11-23")
    scheduler = scheduler_of(runtime, orders, clock)
    await scheduler.tick()

    clock.set("2026-11-24T12:00:00")
    orders.given.clear()
    await scheduler.tick()
    assert orders.given == ["night/2026-11-23", "digest/2026-W47", "night/2026-11-24"]
    for _ in range(MAX_ATTEMPTS - 1):
        # The failing night is ordered again with everything after it, which finds itself done.
        orders.given.clear()
        await scheduler.tick()
        assert orders.given == ["night/2026-11-23"]

    report = {r.name: r for r in await runtime.health(only=["scheduler"])}
    assert any("gave up on night/2026-11-23" in p for p in report["scheduler"].problems)

    orders.given.clear()
    await scheduler.tick()
    assert orders.given == []  # given up: not retried for ever

    orders.failing.clear()  # fixed; ordered by hand, as the status line says
    assert await scheduler.carry_out(parse_order("night/2026-11-23", clock()), {})
    report = {r.name: r for r in await runtime.health(only=["scheduler"])}
    assert not any("gave up" in p for p in report["scheduler"].problems)


async def test_a_running_scheduler_heartbeats_and_status_reads_it(runtime: Runtime) -> None:
    orders, clock = Orders(), Clock("2026-11-22T12:00:00")
    scheduler = Scheduler(
        runtime.pool, orders, orders, night_hour=1, clock=clock, heartbeat=0.1, tick_seconds=3600
    )
    stop = asyncio.Event()
    task = asyncio.create_task(scheduler.run(stop))
    try:
        for _ in range(100):
            report = {r.name: r for r in await runtime.health(only=["scheduler"])}
            if report["scheduler"].state.startswith("waiting for the next tick"):
                break
            await asyncio.sleep(0.05)
        assert report["scheduler"].ok, report["scheduler"].problems
        assert orders.given == ["digest/2026-W46", "night/2026-11-22"]
    finally:
        stop.set()
        await task
