"""A closed task's reading: the free readout over the runs that served it (SPEC M45).

The scheduler appraises what waits at every tick (``ClosureAppraiser``); the route
``POST /factory/appraisal/closures:appraise`` stays as a manual nudge doing the same now.
It counts and never quotes: a label, the two sums, whether a run was cut short and which
channels fired — the typed fields a follow-up may carry (M46).
"""

import json
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

from contracts.appraisal_records import AppraiseClosure
from contracts.errors import DomainError
from contracts.runtime_facts import TaskStatus
from projections import appraisal as facts_model
from services.appraisal.charter import Charter
from services.appraisal.closure import stages_follow_up
from services.appraisal.derivation import cut_short, goal_errors
from services.appraisal.facts import Facts
from services.appraisal.labels import Label, Valence, label, valence
from services.appraisal.outcomes import CONTRIBUTIONS, Contribution
from services.appraisal.reads import Scope, read_charter, read_facts
from services.bus.issued import Issued
from services.declaration import Given
from services.scheduling.orders import AppraiseClosures

log = logging.getLogger(__name__)
SCHEDULER = "scheduler"
MAX_CLOSURES = 100  # a tenant's share of one order, or one call of the route


@dataclass(frozen=True)
class ClosureReading:
    label: Label
    valence: Valence
    cut_short: bool
    channels: tuple[str, ...]


def merged(parts: list[Facts]) -> Facts:
    """The facts of several runs as one reading; a source unreadable for any is unreadable."""
    unreadable = tuple(dict.fromkeys(name for f in parts for name in f.unreadable))
    return Facts(
        feedback=tuple(x for f in parts for x in f.feedback),
        reports=tuple(x for f in parts for x in f.reports),
        evals=tuple(x for f in parts for x in f.evals),
        runs=tuple(x for f in parts for x in f.runs),
        owner_outcomes=tuple(x for f in parts for x in f.owner_outcomes),
        passes=tuple(x for f in parts for x in f.passes),
        read=tuple(dict.fromkeys(n for f in parts for n in f.read if n not in unreadable)),
        unreadable=unreadable,
    )


def read_closure(
    facts: Facts, charter: Charter, now: datetime, table: Mapping[str, Contribution]
) -> ClosureReading:
    errors = goal_errors(facts, charter, now, table)
    return ClosureReading(
        label(errors, charter),
        valence(errors),
        cut_short(facts),
        tuple(sorted({error.channel.value for error in errors})),
    )


async def closure_reading(
    pool: asyncpg.Pool, tenant_id: str, row: Any, charter: Charter, now: datetime,
    table: Mapping[str, Contribution],
) -> ClosureReading:  # fmt: skip
    run_ids = json.loads(row["run_ids"])
    parts = [await read_facts(pool, tenant_id, Scope(run_id=run_id)) for run_id in run_ids]
    return read_closure(merged(parts), charter, now, table)


Execute = Callable[[AppraiseClosure], Awaitable[Any]]


async def appraise_waiting(
    pool: asyncpg.Pool, tenant: str, execute: Execute, clock: Callable[[], datetime],
    table: Mapping[str, Contribution], limit: int,
) -> list[dict[str, Any]]:  # fmt: skip
    """Appraise each transition of ``tenant`` noted and not yet appraised, oldest first; one
    that is refused is answered with its error and the others still go (SPEC M45)."""
    charter = (await read_charter(pool, tenant)).charter
    done: list[dict[str, Any]] = []
    for row in await facts_model.open_closures(pool, tenant, limit):
        reading = await closure_reading(pool, tenant, row, charter, clock(), table)
        command = AppraiseClosure(
            transition_id=row["transition_id"], label=reading.label.value,
            positive=reading.valence.positive, negative=reading.valence.negative,
            cut_short=reading.cut_short, channels=list(reading.channels),
        )  # fmt: skip
        try:
            await execute(command)
        except DomainError as error:
            done.append({"transitionId": row["transition_id"], "error": error.body()})
            continue
        staged = stages_follow_up(TaskStatus(row["status"]), reading.label, reading.cut_short)
        done.append({
            "transitionId": row["transition_id"], "taskId": row["task_id"],
            "label": reading.label.value, "valence": str(reading.valence),
            "cutShort": reading.cut_short, "followUp": staged,
        })  # fmt: skip
    return done


@dataclass
class ClosureAppraiser:
    """The scheduler's ``AppraiseClosures``: every tenant's waiting closures, with no caller
    (SPEC M45: one appraisal per transition, automatically). A transition the read model has
    not projected yet waits for the next tick; one appraised already — by a replica, a
    retried order or the manual route — is left as it is by the aggregate, so each
    transition is appraised once (decisions D39)."""

    given: Given
    table: Mapping[str, Contribution] = field(default_factory=lambda: CONTRIBUTIONS)

    async def __call__(self, order: AppraiseClosures) -> None:
        pool, bus = self.given.pool, self.given.bus
        for tenant in await facts_model.tenants_with_open_closures(pool):

            async def execute(command: AppraiseClosure, tenant: str = tenant) -> Any:
                issued = Issued(command, tenant, SCHEDULER, f"{order.name}/{uuid.uuid4()}",
                                order.now)  # fmt: skip
                return await bus.execute(issued)

            done = await appraise_waiting(
                pool, tenant, execute, lambda: order.now, self.table, MAX_CLOSURES
            )
            refused = [c for c in done if "error" in c]
            if refused:
                log.warning("%s: %d closure(s) refused in a tenant", order.name, len(refused))


def closure_appraiser(given: Given) -> ClosureAppraiser:
    return ClosureAppraiser(given)
