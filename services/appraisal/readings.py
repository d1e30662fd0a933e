"""A sensored line's current reading, in one of five states (SPEC M20).

    unreadable           the store could not be read — never shown as zero (M16, M34)
    deferred             not read here: its source is behind the position asked for, or this
                         reader does not scan it (a per-run snapshot of a rate)
    nothing-waiting      the queue it watches is empty: no age, no count to judge
    too-little-evidence  a rate over fewer runs than MIN_EVIDENCE: not "within" either
    observed             a value, its setpoint and whether it is within

Missing or sparse evidence is never "within setpoint" (M20). The samples come from the
stores (``services/appraisal/reads.py``); the judgement is here, pure.
"""

from dataclasses import dataclass
from enum import StrEnum

from services.appraisal.charter import Sensor
from services.appraisal.setpoints import Unit, render

MIN_EVIDENCE = 5  # runs a rate needs before it says anything


class ReadingState(StrEnum):
    unreadable = "unreadable"
    deferred = "deferred"
    nothing_waiting = "nothing-waiting"
    too_little_evidence = "too-little-evidence"
    observed = "observed"


@dataclass(frozen=True)
class Sample:
    """What a store said: a queue (``waiting``, the oldest wait in seconds) or a rate's
    runs. ``readable`` False: the store could not be read; ``deferred``: not scanned here."""

    readable: bool = True
    deferred: bool = False
    waiting: int = 0
    oldest_wait: float | None = None
    runs: int = 0
    hits: int = 0  # a rate's runs that had it (an intervention)


@dataclass(frozen=True)
class Reading:
    state: ReadingState
    value: float | None = None
    within: bool | None = None  # None unless observed: missing is never within (M20)

    def as_json(self, sensor: Sensor) -> dict[str, object]:
        unit = sensor.setpoint.unit
        return {
            "kind": sensor.kind.value,
            "setpoint": sensor.setpoint.text,
            "state": self.state.value,
            "value": self.value,
            "shown": None if self.value is None else render(unit, self.value),
            "within": self.within,
        }


def reading(sensor: Sensor, sample: Sample) -> Reading:
    if not sample.readable:
        return Reading(ReadingState.unreadable)
    if sample.deferred:
        return Reading(ReadingState.deferred)
    unit, limit = sensor.setpoint.unit, sensor.setpoint.value
    if unit is Unit.rate:
        if sample.runs < MIN_EVIDENCE:
            return Reading(ReadingState.too_little_evidence)
        rate = sample.hits / sample.runs
        return Reading(ReadingState.observed, rate, rate <= limit)
    if sample.waiting == 0:
        return Reading(ReadingState.nothing_waiting)
    if unit is Unit.number:
        return Reading(ReadingState.observed, float(sample.waiting), sample.waiting <= limit)
    if sample.oldest_wait is None:  # something waits but its age is unknown: not zero
        return Reading(ReadingState.unreadable)
    return Reading(ReadingState.observed, sample.oldest_wait, sample.oldest_wait <= limit)
