"""From a Kafka record to a command for the bus, or a refusal naming the field: pure, no I/O.

Every bound is checked before anything is stored: the whole value (``MAX_MESSAGE_BYTES``) before
it is even parsed, the key, each attribute (``contracts.envelope``) and each payload field (the
payload model's own ``max_length``). The CloudEvent itself is read by
``services.kafka.inbound.fast_cloudevent_reading``, as the CloudEvents SDK reads it.
"""

from collections.abc import Callable, Mapping
from datetime import datetime
from json.encoder import encode_basestring_ascii
from typing import Any

from pydantic import ValidationError

from contracts.envelope import MAX_MESSAGE_BYTES, InboundEnvelope
from contracts.errors import Refused
from services.bus.command_bodies import command_from
from services.bus.issued import Issued
from services.kafka.inbound.fast_cloudevent_reading import read_cloudevent
from services.kafka.inbound.subscription import Subscription
from services.observing.tracing import valid_traceparent
from services.permissions.doors import KAFKA
from services.permissions.sources import EVERY_ROLE_SOURCES, SourceRoles

MAX_KEY_BYTES = 1024


def identity(tenant_id: str, source: str, event_id: str) -> str:
    """A CloudEvent's identity, its tenant's ``source`` + ``id``: another tenant's event under
    the same two is another event (otherwise one tenant could apply first under another's
    ids, and the answer "already applied" would tell it the ids were used). Unambiguous even
    when the source holds a slash: the JSON array ``json.dumps([tenant_id, source,
    event_id])`` writes, spelt without its general encoder (all three are strings)."""
    return (
        f"[{encode_basestring_ascii(tenant_id)}, {encode_basestring_ascii(source)}, "
        f"{encode_basestring_ascii(event_id)}]"
    )


def parse(
    record: Any,
    subscriptions: Mapping[str, Subscription],
    clock: Callable[[], datetime],
    sources: SourceRoles = EVERY_ROLE_SOURCES,
) -> tuple[Subscription, Issued]:
    """The subscription a Kafka record's structured-mode CloudEvent belongs to (by its
    ``type``), and the command it carries, acting in the roles its ``source`` holds
    (``sources``); raises ``Refused`` naming the field at fault."""
    headers = {key: bytes(header) for key, header in record.headers or ()}
    return parse_event(
        record.value, record.key, headers, subscriptions, clock, sources.sender, KAFKA.name
    )


def parse_event(
    value: bytes | None,
    key: bytes | None,
    headers: Mapping[str, bytes],
    subscriptions: Mapping[str, Subscription],
    clock: Callable[[], datetime],
    sender: Callable[[InboundEnvelope], frozenset[str]],
    door: str | None = None,
) -> tuple[Subscription, Issued]:
    """One structured-mode CloudEvent, however it came (a Kafka record, an HTTP body in the
    embedded mode): the one reading of both doors, so they refuse and apply alike. ``sender``:
    the roles the command acts in, as its door knows its sender (a source's, a key's);
    ``door``: the door it came in by, as the audit names it (decisions D110)."""
    if value is None:
        raise Refused("the message has no value", field="value")
    if len(value) > MAX_MESSAGE_BYTES:
        raise Refused(
            f"the message is {len(value)} bytes; at most {MAX_MESSAGE_BYTES} are read",
            field="value",
        )
    if key is not None and len(key) > MAX_KEY_BYTES:
        raise Refused(f"the key is longer than {MAX_KEY_BYTES} bytes", field="key")
    values, data, as_json = read_cloudevent(value, key, headers)
    envelope = attributes(values)
    subscription = subscriptions.get(envelope.type)
    if subscription is None:
        expected = ", ".join(sorted(subscriptions))
        raise Refused(f"expected type {expected}, got {envelope.type}", field="type")
    if envelope.actor is None and subscription.strict:
        raise Refused("actor: a command names who sends it", field="actor")
    command = command_from(
        data, subscription.model, subscription.stamped, strict=subscription.strict, as_json=as_json
    )
    return subscription, Issued(
        command=command,
        tenant_id=envelope.tenantid,
        actor=envelope.actor or envelope.source,
        command_id=f"ce/{envelope.source}/{envelope.id}",
        at=clock(),
        identity=identity(envelope.tenantid, envelope.source, envelope.id),
        # The CloudEvents distributed-tracing extension, or the Kafka header of that name.
        trace=valid_traceparent(values.get("traceparent"))
        or valid_traceparent(headers.get("traceparent", b"").decode("latin-1")),
        roles=sender(envelope),
        door=door,
    )


def attributes(values: dict[str, Any]) -> InboundEnvelope:
    """The attributes, bounded and checked (none blank, none holding NUL: the scalars of
    ``contracts.envelope``); extension attributes are let through (CloudEvents allows them),
    ``data`` is read apart."""
    try:
        envelope = InboundEnvelope.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "value"
        raise Refused(f"{field}: {first['msg']}", field=field) from None
    return envelope
