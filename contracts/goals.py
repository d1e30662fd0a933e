"""Goal references: a pointer to what a piece of work served, written ``kind:id`` (SPEC M01–M06).

A reference is a pointer, never a copy of the goal. Two readers, two tempers:

- ``parse_goal_ref`` is strict. It is what an API body or a command goes through: no colon, an
  empty id or a kind outside the closed set is an error, and the caller gets a 422 naming the
  field (M04, M05).
- ``read_goal_ref`` is tolerant. It is what a recorded event goes through: whatever was stored
  under an older (or a neighbour's newer) vocabulary reads as "no reference", never as an error
  and never as a guess (M05, M06).
"""

from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator, StringConstraints

MAX_GOAL_REF = 512
MAX_SERVES = 16


class GoalKind(StrEnum):
    """SPEC M02: the closed set of things a run can serve."""

    charter = "charter"  # a line of the tenant's charter, by its id (M19)
    task = "task"
    project = "project"  # by project id, never its display name (M03)
    setpoint = "setpoint"


@dataclass(frozen=True)
class GoalRef:
    kind: GoalKind
    id: str

    def __str__(self) -> str:
        """SPEC M01: the wire form."""
        return f"{self.kind.value}:{self.id}"


def parse_goal_ref(text: str) -> GoalRef:
    """SPEC M04: split on the first colon, trim both halves; refuse what does not fit."""
    kind, colon, ident = text.partition(":")
    kind, ident = kind.strip(), ident.strip()
    if not colon:
        raise ValueError(f"a goal reference is kind:id; {text!r} has no colon")
    if kind not in GoalKind.__members__:
        known = ", ".join(GoalKind.__members__)
        raise ValueError(f"unknown goal kind {kind!r}; the kinds are {known}")
    if not ident:
        raise ValueError(f"the goal reference {text!r} has an empty id")
    return GoalRef(GoalKind(kind), ident)


def read_goal_ref(text: object) -> GoalRef | None:
    """SPEC M05: from a record, anything that is not a valid reference is no reference."""
    if not isinstance(text, str):
        return None
    try:
        return parse_goal_ref(text)
    except ValueError:
        return None


def read_goal_refs(texts: object) -> tuple[GoalRef, ...]:
    """A recorded ``serves`` list, tolerantly: the references that read, in order, once each."""
    if not isinstance(texts, list | tuple):
        return ()
    refs = (read_goal_ref(text) for text in texts)
    return tuple(dict.fromkeys(ref for ref in refs if ref is not None))


def canonical(text: str) -> str:
    """A strict reference in its one spelling (``charter:x``, trimmed): what is stored."""
    return str(parse_goal_ref(text))


# What an API body or a command carries: refused with a 422 naming the field when malformed.
GoalRefText = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_GOAL_REF), AfterValidator(canonical)
]
