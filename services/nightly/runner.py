"""The nightly runner: plan each tenant's night once, drive it to its end, resume after a crash.

SPEC W78–W103 with §3.8's decisions. ``NightlyRunner(PlanNight)`` is what the scheduler calls
when a night is due; ``resume()`` what a process calls after a restart. The night's own
bookkeeping is issued as the service; each conversation runs as the case's confirmer (W101)
and the case's run is recorded as theirs (``ranBy``, W58), with the night named (W102).

Safe to call twice, from two processes at once, and after a crash:

- the night's id derives from (tenant, ``night/{date}``): a second planner's create loses;
- a night is driven under a PostgreSQL advisory lock of its own, taken with
  ``pg_try_advisory_lock`` on a connection held for the drive: whoever does not get it returns
  (the holder finishes the night), and a crashed holder's session ends, freeing it;
- every conversation is an event as it finishes, under the case's deterministic run id, so a
  resumed drive runs only the missing conversations and the cases with no line yet (W91);
- a night that has ended is never driven again (W92);
- each tenant's night is a bulkhead of its own (``services.scheduling.failures``): a tenant
  whose night fails is recorded with the reason and tried again at the next tick, and the
  other tenants' nights go on in the same run; within a night, a case that faults is a
  failed line and the night goes on (W103).
"""

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any, cast
from uuid import UUID

import asyncpg
from pydantic import BaseModel

from contracts.agent import Effort
from contracts.nights import FinishNight, FinishNightCase, PlanTenantNight, RecordNightConversation
from projections import eval_cases, nights
from projections.eval_cases import tenants_with_confirmed_cases
from projections.nights import running_nights
from services.bus.command_bus import CommandBus
from services.bus.issued import Issued
from services.followers.waiting import wait_for_position
from services.nightly.candidates import changes_owed, confirmed_candidates
from services.nightly.cases import RunsCases
from services.nightly.catalogue import Catalogue, read_catalogue
from services.nightly.confirmer import ACTING_AS, right_before_the_run, rights_now
from services.nightly.domain import Night, night_id, night_run_id
from services.nightly.planning import plan_night, skipped
from services.nightly.settings import NightlySettings
from services.observing.metrics import SCHEDULED_FAILURES
from services.scheduling.failures import NIGHT, NIGHT_CASE, Failure, Unit, isolated, record, settle
from services.scheduling.orders import PlanNight
from services.store.event_store import EventStore
from services.store.existing import existing
from services.store.owners import load_owned

log = logging.getLogger(__name__)

SYSTEM = "system:nightly"  # the service identity the night's own writes are issued as (W87)
MAX_ERROR_TEXT = 500


class ReadModelBehind(RuntimeError):
    """A read model the night plans from has not caught up with the store in time."""


def lock_key(night: UUID) -> int:
    """The night's advisory lock: a bigint from its id, so nights never share a lock."""
    return int.from_bytes(night.bytes[:8], "big", signed=True)


class NightlyRunner:
    def __init__(
        self,
        store: EventStore,
        bus: CommandBus,
        pool: asyncpg.Pool,
        cases: RunsCases,
        settings: NightlySettings,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        read_wait_seconds: float = 60.0,
        catalogue: Callable[[], Catalogue] | None = None,
    ) -> None:
        self.store, self.bus, self.pool, self.cases = store, bus, pool, cases
        self.settings, self.clock = settings, clock
        self.read_wait_seconds = read_wait_seconds
        self.catalogue = catalogue or (lambda: read_catalogue(settings.catalogue))

    async def __call__(self, order: PlanNight) -> None:
        """Plan ``night/{date}`` once for every tenant with confirmed cases and drive each
        night to its end. Off unless enabled (W80)."""
        if not self.settings.enabled:
            log.info("%s: nightly runs are off (FEEDBACKLOOP_EVALS_NIGHTLY_ENABLED)", order.name)
            return
        await self._caught_up(eval_cases.SCHEMA)
        await self._caught_up(nights.SCHEMA)  # the agents' changes (D243)
        failures: list[Failure] = []
        for tenant in await tenants_with_confirmed_cases(self.pool):
            # One tenant's night in a bulkhead of its own: its failure is recorded and every
            # other tenant's night is planned and driven in the same run.
            unit = Unit(NIGHT, tenant, order.date.isoformat(), order.name)
            outcome = await isolated(unit, partial(self.plan_and_drive, tenant, order))
            if isinstance(outcome, Failure):
                failures.append(outcome)
        await settle(self.pool, NIGHT, failures, order=order.name)

    async def plan_and_drive(self, tenant: str, order: PlanNight) -> None:
        await self.plan(tenant, order)
        await self.drive(tenant, order.date.isoformat())

    async def resume(self) -> None:
        """Drive every night still Running (after a restart) to its end (W91); a night that
        fails is recorded (the next tick gives its order again) and the others go on."""
        if not self.settings.enabled:
            return
        await self._caught_up(nights.SCHEMA)
        failures: list[Failure] = []
        for tenant, date in await running_nights(self.pool):
            unit = Unit(NIGHT, tenant, date, f"night/{date}")
            outcome = await isolated(unit, partial(self.drive, tenant, date))
            if isinstance(outcome, Failure):
                failures.append(outcome)
        await record(self.pool, NIGHT, failures)

    async def plan(self, tenant: str, order: PlanNight) -> None:
        """Create the tenant's night with its plan, unless it exists (W87, W88, W92)."""
        date = order.date.isoformat()
        if await asyncio.to_thread(existing, self.store, {night_id(tenant, date)}):
            return
        catalogue = await asyncio.to_thread(self.catalogue)
        candidates = await confirmed_candidates(self.pool, tenant)
        named = {(c.confirmed_by, c.agent) for c in candidates if c.confirmed_by}
        # W95, W99: asked at planning too, so a case its confirmer may no longer run frees
        # its slot for the next runnable case.
        rights = await asyncio.to_thread(rights_now, self.store, tenant, named)
        plan = plan_night(
            candidates,
            self.settings,
            catalogue,
            agent_configured=self.cases.client is not None,
            now=order.now,
            rights=rights,
            changes=await changes_owed(self.pool, tenant, candidates),
        )
        command = PlanTenantNight(
            date=order.date,
            now=order.now,
            inputs=self.settings.inputs(),
            selected=[s.as_json() for s in plan.selected],
            lines=plan.lines,
            note=plan.note,
        )
        await self._issue(tenant, command, f"{order.name}/plan")
        log.info("%s of %s: planned %d cases", order.name, tenant, len(plan.selected))

    async def drive(self, tenant: str, date: str) -> None:
        """Run the night's selected cases with no line yet, then end it; only one driver at a
        time (the others return)."""
        night = night_id(tenant, date)
        async with self.pool.acquire() as conn:
            if not await conn.fetchval("SELECT pg_try_advisory_lock($1)", lock_key(night)):
                log.info("night/%s of %s: driven by another process", date, tenant)
                return
            try:
                await self._drive(tenant, night)
            finally:
                await conn.execute("SELECT pg_advisory_unlock($1)", lock_key(night))

    async def _drive(self, tenant: str, night_ref: UUID) -> None:
        night = await self._load(tenant, night_ref)
        if not night.running:
            return  # W92: ended already, a second pass runs nothing
        for selected in night.pending():
            line = await self._run_case(tenant, night, selected)
            if selected.get("rerun"):  # D242: the line says why the case ran first
                line = {**line, "rerun": selected["rerun"]}
            await self._issue(
                tenant,
                FinishNightCase(night_id=night.id, line=line),
                f"night/{night.date}/{selected['case']}/line",
            )
        await self._issue(tenant, FinishNight(night_id=night.id), f"night/{night.date}/end")
        log.info("night/%s of %s: ended", night.date, tenant)

    async def _run_case(
        self, tenant: str, night: Night, selected: dict[str, Any]
    ) -> dict[str, Any]:
        """One case to its line: skipped when its confirmer lost the right (W99, W100), ran,
        or failed with the error; a fault never stops the night (W103)."""
        case_id, confirmer = UUID(selected["case"]), selected["confirmer"]
        model, effort = selected["model"], cast(Effort, selected["effort"])
        case, reason = await right_before_the_run(
            self.store, self.cases, tenant, case_id, confirmer
        )
        if reason is not None:
            return skipped(case_id, reason, self.clock(), model)
        try:
            return await self._converse(tenant, night, (case_id, case), confirmer, model, effort)
        except Exception as error:  # W103: the case's line says so, the night goes on
            log.warning("night/%s: case %s failed", night.date, case_id, exc_info=True)
            SCHEDULED_FAILURES.labels(NIGHT_CASE).inc()
            said = f"{type(error).__name__}: {error}"[:MAX_ERROR_TEXT]
            return {
                "case": str(case_id),
                "outcome": "failed",
                "reason": f"failed: {said}",
                "model": model,
                "effort": effort,
                "at": self.clock().isoformat(),
            }

    async def _converse(
        self,
        tenant: str,
        night: Night,
        loaded: tuple[UUID, Any],
        confirmer: str,
        model: str,
        effort: Effort,
    ) -> dict[str, Any]:
        case_id, case = loaded  # the case as the runner of cases loaded it, and its id
        client, _ = self.cases.agent_for(case, model)
        run_id = night_run_id(night.date, case_id)
        threads = dict(night.threads(str(case_id)))  # recorded before a crash: never repeated
        for index in range(1, int(night.inputs["conversationsPerCase"]) + 1):
            if index in threads:
                continue
            request = self.cases.request(
                case, model=model, effort=effort, run_id=run_id, index=index, submitter=confirmer
            )
            thread = await self.cases.converse(
                client, case, request, run_id, index, expected_model=model
            )
            command = RecordNightConversation(
                night_id=night.id, case_id=case_id, index=index, thread=thread
            )
            await self._issue(tenant, command, f"night/{night.date}/{case_id}/{index}")
            threads[index] = thread
        ordered = [threads[index] for index in sorted(threads)]
        record = self.cases.recorded(
            case, run_id=run_id, model=model, effort=effort, threads=ordered, night=night.date
        )
        # The run is the confirmer's (ranBy, W58): the conversations ran as them (W101). It
        # is issued in the role they confirmed in, so the bus and the handler ask the rule
        # engine once more, as for a run they start themselves (decisions D103).
        await self.bus.execute(
            Issued(
                record, tenant, confirmer, f"night/{night.date}/{case_id}", self.clock(),
                roles=ACTING_AS,
            )
        )  # fmt: skip
        summary = record.summary
        return {
            "case": str(case_id),
            "outcome": "ran",
            "model": model,
            "effort": effort,
            "runId": str(run_id),
            "score": {
                "passed": summary["passed"],
                "scored": summary["scored"],
                "nonAnswers": summary["non_answers"],
                "lookedRate": summary["looked_rate"],
                "correctRate": summary["correct_rate"],
            },
            "threads": [thread["link"] for thread in ordered],
            "at": self.clock().isoformat(),
        }

    async def _load(self, tenant: str, night: UUID) -> Night:
        found: Night = await asyncio.to_thread(load_owned, self.store, tenant, night, "night")
        return found

    async def _issue(self, tenant: str, command: BaseModel, command_id: str) -> None:
        """The night's bookkeeping, as the service (W87, W101)."""
        issued = Issued(command, tenant, SYSTEM, command_id, self.clock(), service=True)
        await self.bus.execute(issued)

    async def _caught_up(self, schema: str) -> None:
        """Plan from a read model only once it has caught up with the store's head."""
        head = await asyncio.to_thread(self.store.recorder.max_notification_id) or 0
        reached = await wait_for_position(self.pool, schema, head, self.read_wait_seconds)
        if reached < head:
            raise ReadModelBehind(
                f"{schema} is at {reached}, the store at {head}: is its projector running?"
            )
