"""The roles a Kafka message acts in (decisions D27): its ``source`` is mapped to roles by
configuration (``FEEDBACKLOOP_KAFKA_SOURCE_ROLES``), as a key is to its roles; a message may
name one of them in its ``role`` extension attribute, and then acts in that one only.

On Kafka there is no key: the broker's ACL decides who may write to a topic, and this map
decides what a source that may write is trusted to decide, by the same role rules as HTTP."""

from collections.abc import Mapping, Sequence
from typing import Any

from contracts.errors import RoleRequired
from contracts.roles import ROLES

EVERY_SOURCE = "*"
# Unconfigured, every source holds every role: the broker's ACL stays the one gate, as it was
# before roles; a deployment narrows it by naming its sources (and ``*``).
DEFAULT_SOURCE_ROLES: dict[str, list[str]] = {EVERY_SOURCE: list(ROLES)}


def acting(held: frozenset[str], named: str | None) -> frozenset[str]:
    """The roles a command acts in: those held, or the one it names if held. Naming a role
    not held is refused (403 / a ``not-permitted`` dead letter), never silently widened."""
    if named is None:
        return held
    if named not in held:
        raise RoleRequired(f"role {named!r} is not one its sender holds", needed=(named,))
    return frozenset((named,))


class SourceRoles:
    """``source`` → roles; ``*`` names the roles of any source not named (none without it)."""

    def __init__(self, mapping: Mapping[str, Sequence[str]]) -> None:
        self._by_source = {source: frozenset(roles) for source, roles in mapping.items()}
        self._otherwise = self._by_source.get(EVERY_SOURCE, frozenset())

    def of(self, source: str, named: str | None = None) -> frozenset[str]:
        return acting(self._by_source.get(source, self._otherwise), named)

    def sender(self, envelope: Any) -> frozenset[str]:
        """The roles of a CloudEvent's sender: its ``source``'s, or the one it names."""
        return self.of(envelope.source, envelope.role)


EVERY_ROLE_SOURCES = SourceRoles(DEFAULT_SOURCE_ROLES)
