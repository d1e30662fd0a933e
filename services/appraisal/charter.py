"""The charter: a tenant's ordered lines, parsed strictly from TOML (SPEC M07–M16).

    [[line]]
    id = "answers-grounded"
    text = "Answers rest on sources the asker can read."

    [[line]]
    id = "inbox-short"
    text = "Nobody's report waits long."
    sensor = { kind = "request_closure", setpoint = "2d" }

Order is rank (M07): there is no priority or weight field, and one written is refused like any
other unknown key (M08). Every refusal refuses the whole document — there is never a partial
charter (M15) — and names the line (``line`` = its 1-based place, ``lineId`` when it has one).
Being over the character budget is a finding, not a refusal (M14). The parse result is what
the Charter aggregate stores, so nothing downstream parses the TOML again.
"""

import re
import tomllib
from dataclasses import dataclass
from typing import Any

from contracts.errors import Refused
from contracts.scalars import is_blank
from services.appraisal.setpoints import (
    RETIRED,
    STORES,
    UNITS,
    SensorKind,
    Setpoint,
    SetpointError,
    Store,
    parse_setpoint,
)

# SPEC M14: the texts that would enter a prompt (M17: the sensor never does), summed.
CHARTER_BUDGET = 2_500
MAX_DOCUMENT = 64 * 1024
LINE_KEYS = frozenset({"id", "text", "sensor"})
SENSOR_KEYS = frozenset({"kind", "setpoint"})
# A run of digits longer than Python turns into an int (``sys.get_int_max_str_digits``, 4300):
# tomllib's int() raises a bare ValueError for it, carrying no place.
_OVERLONG_INTEGER = re.compile(r"[0-9][0-9_]{4000,}")


@dataclass(frozen=True)
class Sensor:
    kind: SensorKind
    setpoint: Setpoint


@dataclass(frozen=True)
class CharterLine:
    rank: int  # 1 is the highest; the place in the document (M07)
    id: str
    text: str
    sensor: Sensor | None = None


@dataclass(frozen=True)
class Charter:
    lines: tuple[CharterLine, ...] = ()
    findings: tuple[str, ...] = ()

    def line(self, line_id: str) -> CharterLine | None:
        """SPEC M19: a ``charter:<id>`` goal counts only if this charter has the line."""
        return next((line for line in self.lines if line.id == line_id), None)

    def sensing(self, kind: SensorKind) -> CharterLine | None:
        """The line with this sensor kind (at most one, M13)."""
        return next((ln for ln in self.lines if ln.sensor and ln.sensor.kind is kind), None)

    def watching(self, store: Store) -> CharterLine | None:
        """SPEC M18: the highest-ranked line whose sensor watches ``store``."""
        return next(
            (ln for ln in self.lines if ln.sensor and STORES[ln.sensor.kind] is store), None
        )


EMPTY = Charter()


def refuse(message: str, place: int, line_id: str | None, field: str) -> Refused:
    named = f"line {place}" + (f" ({line_id!r})" if line_id else "")
    return Refused(
        f"{named}: {message}", field=f"line[{place}].{field}", line=place, lineId=line_id
    )


def parse_charter(document: str) -> Charter:
    """SPEC M07–M16: the charter a TOML document says, or Refused naming the line."""
    if len(document) > MAX_DOCUMENT:
        raise Refused(f"a charter is at most {MAX_DOCUMENT} characters", field="body")
    try:
        data = tomllib.loads(document)
    except tomllib.TOMLDecodeError as error:
        raise Refused(f"the charter is not valid TOML: {error}", field="body") from None
    except RecursionError:  # arrays nested hundreds deep: tomllib reads them recursively
        raise Refused("the charter nests too deeply to be read", field="body") from None
    except ValueError:  # an integer past Python's digit limit (not a TOMLDecodeError)
        raise overlong_integer(document) from None
    for key in sorted(data.keys() - {"line"}):  # M08: a misspelled table is refused too
        raise Refused(
            f"unknown key or table {key!r}: a charter has only [[line]]",
            field=key if "\x00" not in key else "body",
        )
    raw_lines = data.get("line", [])
    if not isinstance(raw_lines, list):
        raise Refused("lines are written as [[line]] tables", field="line")
    lines: list[CharterLine] = []
    seen_ids: dict[str, int] = {}
    seen_kinds: dict[SensorKind, int] = {}
    for place, raw in enumerate(raw_lines, start=1):
        line = parse_line(place, raw)
        if line.id in seen_ids:  # M13: after trimming
            raise refuse(
                f"the id is already used by line {seen_ids[line.id]}", place, line.id, "id"
            )
        seen_ids[line.id] = place
        if line.sensor is not None:
            kind = line.sensor.kind
            if kind in seen_kinds:  # M13: a store is watched by one line
                raise refuse(
                    f"line {seen_kinds[kind]} already has a {kind.value} sensor",
                    place, line.id, "sensor.kind",
                )  # fmt: skip
            seen_kinds[kind] = place
        lines.append(line)
    size = sum(len(line.text) for line in lines)
    findings: tuple[str, ...] = ()
    if size > CHARTER_BUDGET:
        findings = (f"over budget: the lines' texts hold {size} characters of {CHARTER_BUDGET}",)
    return Charter(tuple(lines), findings)


def overlong_integer(document: str) -> Refused:
    """The refusal of a charter holding an integer too long for Python to read, naming the line
    as a 400-digit one is named: each overlong run is read again as a string saying its length,
    which every setpoint grammar refuses with its line and field. Should the document read
    again name no line (the run sat where a string is welcome, or inside a string), the body
    is refused."""

    def described(run: re.Match[str]) -> str:
        return f'"an integer of {len(run.group().replace("_", ""))} digits"'

    try:
        parse_charter(_OVERLONG_INTEGER.sub(described, document))
    except Refused as refusal:
        if refusal.field != "body":  # the rewrite's own TOML errors say nothing of the original
            return refusal
    return Refused("the charter holds an integer too long to be read", field="body")


def holding_nul(value: Any, path: str) -> str | None:
    """The dotted path of the first key or text holding NUL (TOML's ``\\u0000`` spells it;
    PostgreSQL text cannot hold it), or None."""
    if isinstance(value, str):
        return path if "\x00" in value else None
    items: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        items = [(key if "\x00" not in key else "", item) for key, item in value.items()]
    elif isinstance(value, list):
        items = [(str(index), item) for index, item in enumerate(value)]
    for key, item in items:
        if not key:
            return path
        if found := holding_nul(item, f"{path}.{key}" if path else key):
            return found
    return None


def parse_line(place: int, raw: Any) -> CharterLine:
    if not isinstance(raw, dict):
        raise refuse("a line is a table with id and text", place, None, "line")
    if (at := holding_nul(raw, "")) is not None:
        raise refuse("text must not contain NUL characters", place, None, at or "line")
    ident = raw.get("id")
    line_id = ident.strip() if isinstance(ident, str) and not is_blank(ident) else None
    for key in sorted(raw.keys() - LINE_KEYS):  # M08: e.g. priority = 3
        raise refuse(f"unknown key {key!r} (a line has id, text, sensor)", place, line_id, key)
    if not line_id:  # blank: whitespace and zero-width characters say nothing
        raise refuse("the id is empty", place, None, "id")
    text = raw.get("text")
    if not isinstance(text, str) or is_blank(text):
        raise refuse("the text is empty", place, line_id, "text")
    sensor = None if "sensor" not in raw else parse_sensor(place, line_id, raw["sensor"])
    return CharterLine(place, line_id, text.strip(), sensor)


def parse_sensor(place: int, line_id: str, raw: Any) -> Sensor:
    if not isinstance(raw, dict):
        raise refuse("a sensor is a table with kind and setpoint", place, line_id, "sensor")
    for key in sorted(raw.keys() - SENSOR_KEYS):
        raise refuse(f"unknown sensor key {key!r}", place, line_id, f"sensor.{key}")
    kind = raw.get("kind")
    if isinstance(kind, str) and kind in RETIRED:  # decisions D35: named, not guessed
        raise refuse(
            f"sensor kind {kind!r} is retired; SPEC M09 names it {RETIRED[kind].value!r} "
            f"({UNITS[RETIRED[kind]].value})",
            place, line_id, "sensor.kind",
        )  # fmt: skip
    if kind not in SensorKind.__members__:  # M09, M10: the closed set
        known = ", ".join(SensorKind.__members__)
        raise refuse(f"unknown sensor kind {kind!r}; the kinds are {known}", place, line_id,
                     "sensor.kind")  # fmt: skip
    if "setpoint" not in raw:
        raise refuse("a sensor needs a setpoint", place, line_id, "sensor.setpoint")
    sensor_kind = SensorKind(str(kind))
    try:
        setpoint = parse_setpoint(UNITS[sensor_kind], raw["setpoint"])
    except SetpointError as error:
        raise refuse(f"{sensor_kind.value}: {error}", place, line_id, "sensor.setpoint") from None
    return Sensor(sensor_kind, setpoint)
