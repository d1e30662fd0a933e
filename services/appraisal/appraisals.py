"""An appraisal read now: the charter and the facts in a scope, derived on read (SPEC M34,
M41, M43). The one read both doors use — the API's routes and the console's Appraisal page —
so a label or a valence never reads differently by where it is asked."""

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import asyncpg

from contracts.goals import GoalRef
from services.appraisal.appraise import appraise
from services.appraisal.charter import EMPTY, Charter
from services.appraisal.facts import Facts
from services.appraisal.outcomes import CONTRIBUTIONS, Contribution
from services.appraisal.reads import UNREADABLE, Scope, read_charter, read_facts


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
