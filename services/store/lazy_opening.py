"""Sealed fields opened where they are read: the log readers' twin of
``SealingMapper.to_domain_event`` (decisions D290, D291).

The plain path opens every sealed field of an event as it is decoded. Most readers of the log
never read a person's words (a read model that counts feedback, keeps its ids, or moves a
status), yet paid an AES-GCM decryption and a base64 decode per field per event. Here an
event's personal fields are left as their ``Box`` (the value as stored) in a private slot of
the event, and the event's class holds, for each such field, a ``Sealed`` descriptor that
opens the box when the attribute is first read, with the mapper's current keys, then keeps
the value as the event's own attribute: a second read costs what a plain attribute does.

What a reader sees is what the plain path gives it: the words; the erased marker once the key
is destroyed, also when the erasure became known after the page was read (the box is opened
with the keys of the moment it is read, decisions D221); and ``BrokenSeal`` for a box that
fails authentication (decisions D142, D145), raised where the field is read, so the reader
that reads it parks the event as before. A reader that never reads the field never opens it.

Only ``services.followers.decoding.decode`` (every follower's and every rebuild's way from the
log) takes this path. Loading an aggregate, an erasure's and an export's reading of a
person's events (``services.privacy.holdings``) and an event to be upcast keep the plain path:
the library's aggregates and the upcasters read an event's ``__dict__``, where a box is not
its value. ``tests/unit/test_store_lazy_opening.py`` holds the two paths to the same values.
"""

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.domain import DomainEventProtocol
from eventsourcing.persistence import Mapper, StoredEvent
from eventsourcing.utils import resolve_topic

from services.store.sealing import (
    EACH,
    BrokenSeal,
    Personal,
    SealingMapper,
    personal_of,
    place_of,
)

HELD = "\x00sealed"  # the event's boxes not opened yet, by field: no attribute has this name
_MISSING = object()


class Box:
    """A personal field of an event as stored, opened when first read (decisions D290)."""

    __slots__ = ("field", "mapper", "stored", "value")

    def __init__(
        self, mapper: SealingMapper, field: "Field", stored: StoredEvent, value: Any
    ) -> None:
        self.mapper, self.field, self.stored, self.value = mapper, field, stored, value

    def open(self) -> Any:
        """The field as the plain path reads it, with the keys of this moment."""
        name, declared, paths = self.field
        if paths == (name,):  # the field itself sealed, or a list of names each sealed
            return self.mapper.opened_value(
                place_of(self.stored), name, self.value, declared.is_identity(name)
            )
        state = {name: self.value}
        self.mapper.open_fields(state, place_of(self.stored), declared, paths)
        return state[name]

    def __reduce__(self) -> tuple[Any, tuple[Any]]:
        # Handed to another process as its value: the mapper and its keys stay here.
        return _as_is, (self.open(),)


def _as_is(value: Any) -> Any:
    return value


class Held(dict[str, Any]):
    """An event's boxes by field, knowing the event's class: handed to another process (a
    rebuild's worker's staged events) opened, with the class's descriptors put in place there
    before the event is read."""

    __slots__ = ("cls",)
    cls: type

    def __reduce__(self) -> tuple[Any, tuple[type, dict[str, Any]]]:
        return _held, (self.cls, {name: _handed(value) for name, value in self.items()})


class Broken:
    """A box that failed authentication, handed to another process: read there, it raises
    the incident as the box would have (decisions D142)."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _handed(value: Any) -> Any:
    if type(value) is not Box:
        return value
    try:
        return value.open()
    except BrokenSeal as broken:
        return Broken(str(broken))


def _held(cls: type, values: dict[str, Any]) -> Held:
    plan_of(cls)
    held = Held(values)
    held.cls = cls
    return held


class Sealed:
    """A personal field of an event class: an event decoded lazily holds its box in ``HELD``
    and opens it here on the first read; the value then sits in the event's own ``__dict__``,
    which Python reads before a descriptor without ``__set__``. An event built any other way
    (its constructor, the plain path) has the field in its ``__dict__`` and never calls here."""

    __slots__ = ("default", "name")

    def __init__(self, name: str, default: Any) -> None:
        self.name, self.default = name, default

    def __get__(self, event: Any, owner: type | None = None) -> Any:
        if event is not None:
            held = event.__dict__.get(HELD)
            if held is not None and self.name in held:
                value = held[self.name]
                if type(value) is Broken:
                    raise BrokenSeal(value.reason)
                if type(value) is Box:
                    value = value.open()  # a failed box stays held: it raises on every read
                    held[self.name] = value  # a copy of the event shares it, opened
                event.__dict__[self.name] = value
                return value
        if self.default is _MISSING:
            raise AttributeError(f"{(owner or type(event)).__name__} has no {self.name!r}")
        return self.default


Field = tuple[str, Personal, tuple[str, ...]]  # a top-level field, its class's declaration, paths


@dataclass(frozen=True)
class Plan:
    """What an event class's personal fields are: each top-level field with its paths."""

    fields: tuple[Field, ...]
    version: int


_plans: dict[type, Plan | None] = {}


def plan_of(cls: type) -> Plan | None:
    """The class's plan, its ``Sealed`` descriptors put in place the first time; None for a
    class read the plain way (nothing personal, or a field a descriptor would shadow)."""
    if cls in _plans:
        return _plans[cls]
    declared = personal_of(cls)
    plan = None if declared is None else _planned(cls, declared)
    _plans[cls] = plan
    return plan


def _planned(cls: type, declared: Personal) -> Plan | None:
    fields: dict[str, tuple[str, ...]] = {}
    for path in declared.every_field:
        name = path.partition(".")[0].removesuffix(EACH)
        fields[name] = (*fields.get(name, ()), path)
    descriptors = {}
    for name in fields:
        default = _class_attribute(cls, name)
        if type(default) is Sealed:
            default = default.default
        elif hasattr(type(default), "__get__"):
            return None  # a property or method of that name: read the plain way
        descriptors[name] = Sealed(name, default)
    for name, descriptor in descriptors.items():
        setattr(cls, name, descriptor)
    planned = tuple((name, declared, paths) for name, paths in fields.items())
    return Plan(planned, getattr(cls, "class_version", 1))


def _class_attribute(cls: type, name: str) -> Any:
    for klass in cls.__mro__:
        if name in vars(klass):
            return vars(klass)[name]
    return _MISSING


def decode_lazily(mapper: Mapper[UUID], stored: StoredEvent) -> DomainEventProtocol[UUID]:
    """The event ``mapper.to_domain_event`` gives, its sealed fields opened where read."""
    if not isinstance(mapper, SealingMapper):
        return mapper.to_domain_event(stored)
    cls = resolve_topic(stored.topic)
    plan = _plans[cls] if cls in _plans else plan_of(cls)
    if plan is None:
        return mapper.to_domain_event(stored)
    state = mapper.decoded_state(stored)
    if state.pop("class_version", 1) != plan.version:
        return mapper.to_domain_event(stored)  # an upcaster reads the state: opened first
    held = None
    for field in plan.fields:
        # A text, a number or None is stored as it is (a box is an object): left in place.
        value = state.get(field[0])
        if type(value) is dict or type(value) is list:
            if held is None:
                held = state[HELD] = Held()
                held.cls = cls
            held[field[0]] = Box(mapper, field, stored, state.pop(field[0]))
    state["originator_id"] = stored.originator_id
    state["originator_version"] = stored.originator_version
    event = object.__new__(cls)
    object.__setattr__(event, "__dict__", state)
    return event  # type: ignore[no-any-return]
