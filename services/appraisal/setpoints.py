"""Sensors and their setpoints (SPEC M09–M12): the SPEC's closed set of kinds.

Each sensor kind fixes the unit of its setpoint; a setpoint in another unit, or of zero, is
refused, because nothing could ever be within it (M11). The grammar (M12):

- duration: ``<n><unit>`` pieces with units ``s m h d w``, combinable (``1d12h``), as a string;
- count: a whole number (TOML integer, or a string of digits);
- rate: a number in [0, 1] (``0.2``) or a percentage string (``"20%"``).

Digits are ASCII digits (``"²"`` or ``"٣"`` is no count), and every setpoint is bounded: a
count up to a billion (the bound of every count the service reads, ``contracts.scalars``), a
duration up to ten years, a rate within [0, 1] and finite. A 400-digit setpoint is refused
as a setpoint, not found too large for a float later.
"""

import re
from dataclasses import dataclass
from enum import StrEnum

from contracts.scalars import MAX_COUNT


class Unit(StrEnum):
    number = "count"  # a whole number (``count`` would shadow str.count)
    duration = "duration"
    rate = "rate"


class SensorKind(StrEnum):
    """SPEC M09: the closed set, as the SPEC names it. What each reads here is decisions D35."""

    outbox_waiting = "outbox_waiting"  # drafts the agents hold pending for their owner (count)
    outbox_age = "outbox_age"  # the oldest pending draft's wait (duration)
    question_latency = "question_latency"  # the oldest parked question's wait (duration)
    request_closure = "request_closure"  # the oldest open report's time not yet Resolved
    intervention_rate = "intervention_rate"  # runs with an escalation or correction (rate)


# The kinds this service used to accept, before the SPEC's names: each is refused, naming the
# SPEC kind that now reads what it read (decisions D35).
RETIRED: dict[str, SensorKind] = {
    "inbox_waiting": SensorKind.request_closure,
    "inbox_age": SensorKind.request_closure,
    "proposal_wait": SensorKind.question_latency,
    "eval_fail_rate": SensorKind.intervention_rate,
}


class Store(StrEnum):
    """The stores the sensors watch; two sensors may watch one store (M18)."""

    outbox = "outbox"  # the agents' pending drafts (RunCompleted)
    questions = "questions"  # the agents' parked questions (RunCompleted)
    requests = "requests"  # wrong-answer reports, this service's own
    interventions = "interventions"  # escalations and corrections, this service's own
    evals = "evals"  # watched by no sensor: an eval reply reaches nobody


STORES: dict[SensorKind, Store] = {
    SensorKind.outbox_waiting: Store.outbox,
    SensorKind.outbox_age: Store.outbox,
    SensorKind.question_latency: Store.questions,
    SensorKind.request_closure: Store.requests,
    SensorKind.intervention_rate: Store.interventions,
}

UNITS: dict[SensorKind, Unit] = {
    SensorKind.outbox_waiting: Unit.number,
    SensorKind.outbox_age: Unit.duration,
    SensorKind.question_latency: Unit.duration,
    SensorKind.request_closure: Unit.duration,
    SensorKind.intervention_rate: Unit.rate,
}

SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}
MAX_DURATION_SECONDS = 3650 * 86_400  # ten years: no wait in these stores is watched longer
# ``[0-9]``, not ``\d``: Python's ``\d`` matches every script's digits, and ``int`` reads them.
_DURATION = re.compile(r"(?:[0-9]{1,12}[smhdw])+")
_PIECE = re.compile(r"([0-9]{1,12})([smhdw])")
_DIGITS = re.compile(r"[0-9]{1,12}")
_DECIMAL = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,12})?")
_PERCENT = re.compile(r"([0-9]{1,3}(?:\.[0-9]{1,12})?)%")


class SetpointError(ValueError):
    """A setpoint that does not fit its sensor's unit, or is zero."""


@dataclass(frozen=True)
class Setpoint:
    """A parsed setpoint: seconds for a duration, a whole number for a count, a share for a
    rate; ``text`` is what the person wrote, shown back as written."""

    unit: Unit
    value: float
    text: str


def parse_setpoint(unit: Unit, raw: object) -> Setpoint:
    """SPEC M10–M12: the setpoint in its sensor's unit, or SetpointError saying why."""
    match unit:
        case Unit.duration:
            value = duration_seconds(raw)
        case Unit.number:
            value = whole_number(raw)
        case Unit.rate:
            value = share(raw)
    if value == 0:
        raise SetpointError("a setpoint of zero is refused: nothing could be within it")
    return Setpoint(unit, value, str(raw))


def shown(raw: object) -> str:
    """The setpoint as written, cut short: a refusal need not echo 64 KiB."""
    text = repr(raw)
    return text if len(text) <= 60 else f"{text[:57]}..."


def duration_seconds(raw: object) -> float:
    if not isinstance(raw, str) or not _DURATION.fullmatch(raw.strip()):
        raise SetpointError(f"a duration is like 24h or 1d12h (units s m h d w), not {shown(raw)}")
    seconds = sum(int(n) * SECONDS[u] for n, u in _PIECE.findall(raw.strip()))
    if seconds > MAX_DURATION_SECONDS:
        raise SetpointError(f"a duration is at most 3650d (ten years), not {shown(raw)}")
    return float(seconds)


def whole_number(raw: object) -> float:
    number: int | None = None
    if isinstance(raw, int) and not isinstance(raw, bool):
        number = raw
    elif isinstance(raw, str) and _DIGITS.fullmatch(raw.strip()):
        number = int(raw.strip())
    if number is None or not 0 <= number <= MAX_COUNT:
        raise SetpointError(
            f"a count is a whole number from 0 to {MAX_COUNT:,} in ASCII digits, not {shown(raw)}"
        )
    return float(number)


def share(raw: object) -> float:
    value: float | None = None
    if isinstance(raw, float):
        value = raw
    elif isinstance(raw, int) and not isinstance(raw, bool) and raw in (0, 1):
        value = float(raw)  # only these: an int past a double's range does not convert
    elif isinstance(raw, str) and (percent := _PERCENT.fullmatch(raw.strip())):
        value = float(percent.group(1)) / 100
    elif isinstance(raw, str) and _DECIMAL.fullmatch(raw.strip()):
        value = float(raw.strip())
    # A NaN is within no range: the comparison refuses it with infinity.
    if value is None or not 0.0 <= value <= 1.0:
        raise SetpointError(f"a rate is a share within [0, 1] like 0.2 or 20%, not {shown(raw)}")
    return value


def render(unit: Unit, value: float) -> str:
    """A reading in its unit, as a person reads it: ``3d 16h``, ``4``, ``25%``."""
    match unit:
        case Unit.number:
            return str(int(value))
        case Unit.rate:
            return f"{value * 100:.0f}%"
        case Unit.duration:
            seconds, parts = int(value), []
            for name, size in (("w", 604_800), ("d", 86_400), ("h", 3600), ("m", 60)):
                if seconds >= size:
                    parts.append(f"{seconds // size}{name}")
                    seconds %= size
            return " ".join(parts[:2]) or f"{seconds}s"
