"""Frozen dataclass instances built without their ``__init__``: the fast twin of
``cls(**fields)``.

A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``; the command
path and every reader of the log build one or more for every command or event (a created
event, a receipt, a notification read from the log). ``frozen_from_fields`` fills the
instance's ``__dict__`` in one step instead, as the library's mapper builds its domain events.
The plain path is the class's own constructor; ``tests/unit/test_fast_paths.py`` holds the two
equal, field for field and in order (a stored event writes its fields in that order).
"""

from typing import Any, TypeVar

T = TypeVar("T")


def frozen_from_fields(cls: type[T], fields: dict[str, Any]) -> T:
    """``cls(**fields)`` for a frozen dataclass whose ``__post_init__`` would change nothing:
    ``fields`` names every field, in the class's order, each already of its type."""
    instance = object.__new__(cls)
    object.__setattr__(instance, "__dict__", fields)
    return instance
