"""What of an event is personal: the declaration an event class makes (decisions D42), which
``services.store.sealing`` seals and opens, and where it points in an event's state: whose
keys an event needs (``owners_of``), the value at a declared path (``replace_at``). The
contexts import the declaration from ``services.store.sealing`` (decisions D302)."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

EACH = "[]"  # ``threads[].text``: the key ``text`` of each record of the list ``threads``


@dataclass(frozen=True)
class Personal:
    """What of an event is personal, and whose key seals it.

    ``text``: fields a person wrote (``"facts.expected"`` names a key inside a dict field,
    ``"threads[].text"`` that key of each record of a list field).
    ``identity``: fields that name the person. ``person``: the field holding the person (their
    key, in the event's tenant); without it, the key the aggregate named by ``of`` (a field
    holding an aggregate id; by default this event's own aggregate) was sealed under.
    ``binds``: later events of this aggregate, which name no person, use this event's key
    (a report's hand-over uses its draft's; a case lifted from a report, and its patches, the
    report's).
    ``dated``: the key is the person's key of the event's month, which a tenant's retention
    destroys (decisions D45); otherwise their key kept until they are erased.
    ``names``: fields that name someone other than the event's person (a reviewer, a
    maintainer, an addressee), each with the role an export shows in its place (decisions
    D130, D136): each is sealed under the key of the person it names (a list, each item under
    its own), so that erasing that person erases their id here too. Needs ``tenant_id`` on
    the event; an event without one (written before it had one) keeps the names plain.
    ``naming``: fields sealed under the person's key when their value holds the person's id
    (a feedback's subject ref that begins with its giver's id), read as an identity; a value
    that does not hold it (a run's id, made by the runtime) names nobody and stays plain, so
    counts and joins by it stay (decisions D137)."""

    text: tuple[str, ...] = ()
    identity: tuple[str, ...] = ()
    person: str | None = None
    of: str | None = None
    binds: bool = False
    dated: bool = False
    names: Mapping[str, str] = field(default_factory=dict)
    naming: tuple[str, ...] = ()

    @property
    def fields(self) -> tuple[str, ...]:
        return self.text + self.identity

    @cached_property  # asked for every event written (decisions D301)
    def seals(self) -> bool:
        """Whether anything is sealed under the event's own key (its person's, or the one
        bound to its aggregate)."""
        return bool(self.fields or self.naming)

    @cached_property
    def whole_fields(self) -> tuple[str, ...]:
        """The personal fields sealed whole: a field itself, no key inside it."""
        return tuple(path for path in self.fields if "." not in path and EACH not in path)

    @cached_property
    def inner_fields(self) -> tuple[str, ...]:
        """The personal keys inside fields: ``facts.expected``, ``threads[].text``."""
        return tuple(path for path in self.fields if path not in self.whole_fields)

    @cached_property  # asked for every event read (decisions D222)
    def every_field(self) -> tuple[str, ...]:
        """Every field declared personal, whoever's key seals it."""
        return self.fields + tuple(self.names) + self.naming

    def is_identity(self, path: str) -> bool:
        """Read as an identity: erased to ``erased:<key>``, distinct people stay distinct."""
        return path in self.identity or path in self.names or path in self.naming


def personal_of(cls: type) -> Personal | None:
    declared = getattr(cls, "personal", None)
    return declared if isinstance(declared, Personal) else None


def month_of(at: datetime) -> str:
    return f"{at.year:04d}-{at.month:02d}"


def owners_of(event: Any, declared: Personal) -> list[tuple[str, str, str]]:
    """The keys (tenant, person, scope) sealing ``event`` will ask for, where they can be told
    from its fields alone: the person's, and those of the people a field names. Others (a key
    bound to an aggregate) are asked for as before, one at a time."""
    state = vars(event)
    tenant = state.get("tenant_id")
    if not isinstance(tenant, str):
        return []
    owners = []
    if declared.person is not None and declared.seals:
        person = state.get(declared.person)
        if person is not None:
            scope = month_of(state["timestamp"]) if declared.dated else ""
            owners.append((tenant, str(person), scope))
    for path in declared.names:
        value = state.get(path)
        for name in value if type(value) is list else [value]:
            if type(name) is str and name:
                owners.append((tenant, name, ""))
    return owners


def replace_at(state: dict[str, Any], path: str, seal: Callable[[str, Any], Any]) -> None:
    """``seal(place's path, value)`` in place of the value at ``path``: a field, a key
    of a dict field (``facts.thread``), or a key of each record of a list (``threads[].text``,
    each item at a place of its own)."""
    field, _, inner = path.partition(".")
    if field.endswith(EACH):
        name = field.removesuffix(EACH)
        items = state.get(name)
        if type(items) is list:
            state[name] = [
                {**item, inner: seal(f"{name}[{index}].{inner}", item[inner])}
                if type(item) is dict and item.get(inner) is not None
                else item
                for index, item in enumerate(items)
            ]
        return
    value = state.get(field)
    if inner:
        if type(value) is dict and value.get(inner) is not None:
            state[field] = {**value, inner: seal(path, value[inner])}
    elif value is not None:
        state[field] = seal(path, value)
