"""An appraisal read now: the charter and the facts in a scope, derived on read (SPEC M34,
M41, M43), and the samples the charter's sensors read (M20). The one read both doors use —
the API's routes and the console's Appraisal page — so a label, a valence or a reading never
reads differently by where it is asked."""

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

import asyncpg

from contracts.goals import GoalRef
from projections.read_model import schema_named
from services.appraisal.appraise import appraise
from services.appraisal.charter import EMPTY, Charter
from services.appraisal.facts import Facts
from services.appraisal.outcomes import CONTRIBUTIONS, Contribution
from services.appraisal.readings import Sample
from services.appraisal.reads import (
    UNREADABLE,
    Scope,
    read_charter,
    read_facts,
    sample_interventions,
    sample_requests,
    sample_runtime,
)
from services.appraisal.setpoints import SensorKind
from services.followers.positions import read_position

INBOX_READ_MODEL = "inbox"  # request_closure reads the inbox's open reports
RATE_WINDOW = timedelta(days=30)  # intervention_rate reads the last 30 days' runs


async def charter_or_unreadable(pool: asyncpg.Pool, tenant_id: str) -> tuple[Charter, bool]:
    """M16: an unreadable charter marks the reading partial; it is not an empty one."""
    try:
        return (await read_charter(pool, tenant_id)).charter, True
    except UNREADABLE:
        return EMPTY, False


async def appraisal_of(
    pool: asyncpg.Pool,
    tenant_id: str,
    scope: Scope,
    now: datetime,
    table: Mapping[str, Contribution] = CONTRIBUTIONS,
    goal: GoalRef | None = None,
) -> tuple[dict[str, Any], Facts]:
    """Read the facts, derive now: nothing derived is ever stored. One run's reading is
    neutral and partial if it compacted (M43)."""
    charter, readable = await charter_or_unreadable(pool, tenant_id)
    facts = await read_facts(pool, tenant_id, scope)
    compacted = scope.run_id is not None and any(run.compacted for run in facts.runs)
    derived = appraise(
        facts, charter, now, table, charter_readable=readable, goal=goal, compacted=compacted
    )
    return derived | {"since": iso(scope.since), "until": iso(scope.until)}, facts


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


async def sensor_samples(
    pool: asyncpg.Pool,
    tenant_id: str,
    charter: Charter,
    now: datetime,
    wanted: int | None = None,
) -> dict[SensorKind, Sample]:
    """A sample of each store a line watches (only those: an unwatched store is not read).
    With ``wanted`` (the position the caller asked to read at), a store whose read model is
    behind it reads ``deferred`` rather than an old value or a wait (SPEC M20)."""
    kinds = {line.sensor.kind for line in charter.lines if line.sensor is not None}
    samples: dict[SensorKind, Sample] = {}
    if kinds & {SensorKind.outbox_waiting, SensorKind.outbox_age, SensorKind.question_latency}:
        outbox, questions = await sample_runtime(pool, tenant_id, now)
        samples[SensorKind.outbox_waiting] = samples[SensorKind.outbox_age] = outbox
        samples[SensorKind.question_latency] = questions
    if SensorKind.request_closure in kinds:
        if wanted is not None and await behind(pool, INBOX_READ_MODEL, wanted):
            samples[SensorKind.request_closure] = Sample(deferred=True)
        else:
            samples[SensorKind.request_closure] = await sample_requests(pool, tenant_id, now)
    if SensorKind.intervention_rate in kinds:
        since = now - RATE_WINDOW
        rate = await sample_interventions(pool, tenant_id, since)
        samples[SensorKind.intervention_rate] = rate
    return samples


async def behind(pool: asyncpg.Pool, read_model: str, wanted: int) -> bool:
    try:
        return await read_position(pool, schema_named(read_model)) < wanted
    except UNREADABLE:
        return False  # its own read says unreadable if it is
