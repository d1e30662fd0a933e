"""A closed task's reading: the free readout over the runs that served it (SPEC M45).

It counts and never quotes: a label, the two sums, whether a run was cut short and which
channels fired — the typed fields a follow-up may carry (M46).
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from services.appraisal.charter import Charter
from services.appraisal.derivation import cut_short, goal_errors
from services.appraisal.facts import Facts
from services.appraisal.labels import Label, Valence, label, valence
from services.appraisal.outcomes import Contribution
from services.appraisal.reads import Scope, read_facts


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
