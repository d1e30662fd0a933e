"""What a context consumes from Kafka, declared once: topic, message (CloudEvent type and
payload model), how strictly it is read, and the checks that need I/O before a decision."""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, get_args

import asyncpg
from pydantic import BaseModel

from contracts.envelope import InboundEnvelope
from services.bus.issued import Issued
from services.edge.auth import Scope

# A check that needs the database before the decision (an artifact must exist); it raises a
# DomainError to refuse the message.
Admit = Callable[[asyncpg.Pool, Issued], Awaitable[None]]


@dataclass(frozen=True)
class Subscription:
    """One CloudEvent type on one topic.

    ``envelope`` is the documented message (``contracts.envelope``): its ``type`` literal is
    the CloudEvent type and its ``data`` the payload model, so neither is written twice. The
    handler is the command bus's for the payload model (one registry maps each command to its
    handler). ``strict``: our own commands, unknown fields refused and nothing coerced.
    Tolerant (``strict=False``): other services' events, unknown fields kept on the model
    (``model_extra``) and ignored, so a neighbour's new field is never a dead letter.
    ``stamped``: payload fields the server sets; a message bringing one is refused by name.
    ``scope``: what a key must hold to post this message over HTTP (``POST /factory/events``),
    the scope of the HTTP route that writes the same fact, so that one permission holds
    whatever the door (SPEC C52). On Kafka there is no key: who may write to the topic is the
    broker's ACL's business, and what a source may decide is the roles configured for it
    (``services.permissions.sources``, decisions D27), checked by the bus as for a key.
    """

    topic: str
    envelope: type[InboundEnvelope]
    title: str
    description: str
    scope: Scope
    strict: bool = True
    stamped: frozenset[str] = frozenset()
    admit: Admit | None = None

    # Cached: read for every message, and each reading walks the envelope's fields.
    @cached_property
    def cloudevent_type(self) -> str:
        (literal,) = get_args(self.envelope.model_fields["type"].annotation)
        return str(literal)

    @cached_property
    def model(self) -> type[BaseModel]:
        model: Any = self.envelope.model_fields["data"].annotation
        assert isinstance(model, type), self.envelope
        assert issubclass(model, BaseModel), self.envelope
        return model
