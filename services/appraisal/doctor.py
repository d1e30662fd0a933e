"""Doctor findings from the charter's sensors over the last runs (the seed's ``mecha doctor``).

Each run records the agent's outbox and questions as they stood (RunCompleted's counters), so
each of the last ``RUNS`` runs gives an outbox_waiting, outbox_age and question_latency reading
of its own. request_closure and intervention_rate are read from this service's stores, not per
run: in a run's snapshot they read ``deferred`` (SPEC M20) and give no finding here.

A line past its setpoint on each of the last ten runs is a finding: either the debt is real or
the setpoint is in the wrong unit (an hour meant as a day), and the doctor says both, because
it cannot tell which. Fewer than ten runs, or one that did not measure it, is no finding:
missing evidence is never "past", as it is never "within" (M20).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from contracts.neighbours import RunCounters
from services.appraisal.charter import Charter, CharterLine
from services.appraisal.readings import Reading, ReadingState, Sample, reading
from services.appraisal.setpoints import SensorKind

RUNS = 10


@dataclass(frozen=True)
class RunSnapshot:
    completed_at: datetime
    counters: RunCounters | None


def snapshot_sample(kind: SensorKind, run: RunSnapshot) -> Sample:
    """One run's own reading of a sensor (decisions D35)."""
    c = run.counters
    if kind in (SensorKind.request_closure, SensorKind.intervention_rate):
        return Sample(deferred=True)
    if c is None:
        return Sample(readable=False)
    if kind is SensorKind.question_latency:
        count, since = c.parked_questions, c.oldest_parked_question_at
    else:
        count, since = c.pending_drafts, c.oldest_pending_draft_at
    if count is None:
        return Sample(readable=False)
    wait = None if since is None else max((run.completed_at - since).total_seconds(), 0.0)
    return Sample(waiting=count, oldest_wait=wait)


def run_readings(line: CharterLine, runs: Sequence[RunSnapshot]) -> list[Reading]:
    assert line.sensor is not None
    return [reading(line.sensor, snapshot_sample(line.sensor.kind, run)) for run in runs]


def findings(charter: Charter, newest_first: Sequence[RunSnapshot]) -> list[str]:
    """Lines past their setpoint on each of the last ``RUNS`` runs, each said in one line."""
    last = list(newest_first[:RUNS])
    said = []
    for line in charter.lines:
        if line.sensor is None or len(last) < RUNS:
            continue
        readings = run_readings(line, last)
        if all(r.state is ReadingState.observed and r.within is False for r in readings):
            said.append(
                f"line {line.id!r} ({line.sensor.kind.value}) read past its setpoint "
                f"{line.sensor.setpoint.text} on each of the last {RUNS} runs: either the debt "
                "is real, or the setpoint is in the wrong unit"
            )
    return said
