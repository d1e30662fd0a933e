"""Values made in fewer steps than their classes' own way, each the same value (tests hold
them to it). Issue 12: on the command path and in every reader of the log these were made once
or more for every command or event.

- ``uuid5_in(namespace)``: ``uuid5(namespace, name)``, with the namespace's bytes read once
  (the standard library reads them and imports hashlib at every call: half of its ~4 µs).
- ``made(cls, fields)``: an instance of a frozen dataclass holding ``fields`` (every field, in
  the class's order), without its ``__init__``, which sets each through
  ``object.__setattr__``: about a third of the cost. The library's mapper makes its domain
  events so.
"""

from collections.abc import Callable
from hashlib import sha1
from typing import Any, TypeVar
from uuid import UUID

T = TypeVar("T")


def uuid5_in(namespace: UUID) -> Callable[[str], UUID]:
    prefix = namespace.bytes

    def derive(name: str) -> UUID:
        return UUID(bytes=sha1(prefix + name.encode()).digest()[:16], version=5)

    return derive


def made(cls: type[T], fields: dict[str, Any]) -> T:
    instance = object.__new__(cls)
    object.__setattr__(instance, "__dict__", fields)
    return instance
