"""From a Kafka record to a command for the bus, or a refusal naming the field: pure, no I/O.

Every bound is checked before anything is stored: the whole value (``MAX_MESSAGE_BYTES``) before
it is even parsed, the key, each attribute (``contracts.envelope``) and each payload field (the
payload model's own ``max_length``).

Issue 12: the CloudEvents SDK's reading (its JSON format, then an attribute check per attribute
and a second event built to add the key) cost about 40 µs of the ~110 µs a message took here.
An event of the plain shape (``plain_event``) is read with the very ``json.loads`` the SDK uses
and the checks the SDK would pass it by; anything else (a ``time``, ``data_base64``, another
spec version, an odd attribute) still goes through the SDK, so a message is refused or read
exactly as before.
"""

import json
import math
import re
from collections.abc import Callable, Mapping
from datetime import datetime
from json.encoder import encode_basestring_ascii
from typing import Any

import orjson
from cloudevents.core.bindings.kafka import KafkaMessage as CloudEventMessage
from cloudevents.core.bindings.kafka import from_structured_event
from pydantic import ValidationError

from contracts.envelope import MAX_MESSAGE_BYTES, InboundEnvelope
from contracts.errors import Refused
from services.bus.command_bodies import command_from
from services.bus.issued import Issued
from services.kafka.inbound.subscription import Subscription
from services.observing.tracing import valid_traceparent

MAX_KEY_BYTES = 1024
# The attributes the SDK checks to be non-empty strings (CloudEvents 1.0 context attributes).
REQUIRED_ATTRIBUTES = frozenset({"id", "source", "type", "specversion"})
OPTIONAL_ATTRIBUTES = frozenset({"datacontenttype", "dataschema", "subject"})
EXTENSION_NAME = re.compile(r"[a-z0-9]+")  # CloudEvents 1.0: lowercase letters and digits


def identity(tenant_id: str, source: str, event_id: str) -> str:
    """A CloudEvent's identity, its tenant's ``source`` + ``id``: another tenant's event under
    the same two is another event (found by attacking the service: one tenant could apply
    first under another's ids, and the answer "already applied" told it the ids were used).
    Unambiguous even when the source holds a slash: the JSON array ``json.dumps([tenant_id,
    source, event_id])`` writes, spelt without its general encoder (a third of the time; all
    three are strings)."""
    return (
        f"[{encode_basestring_ascii(tenant_id)}, {encode_basestring_ascii(source)}, "
        f"{encode_basestring_ascii(event_id)}]"
    )


class NotPlain(ValueError):
    """A value the fast reading leaves to the SDK."""


def finite(text: str) -> float:
    """A JSON number as ``json.loads`` reads it, if finite (``1e400`` reads as infinity)."""
    number = float(text)
    if number in (math.inf, -math.inf):
        raise NotPlain(text)
    return number


def no_constant(text: str) -> Any:
    """``NaN``, ``Infinity``: ``json.loads`` reads them, JSON has none."""
    raise NotPlain(text)


def data_as_json(data: Any) -> bytes | str:
    """The ``data`` of a plain event as JSON text for its model. Plain data has only finite
    numbers, so orjson writes what ``json.dumps`` would mean (in a fifth of the time); an int
    beyond 64 bits or a lone surrogate, which orjson refuses, goes to ``json.dumps``."""
    try:
        return orjson.dumps(data)
    except orjson.JSONEncodeError:
        return json.dumps(data)


def parse(
    record: Any, subscriptions: Mapping[str, Subscription], clock: Callable[[], datetime]
) -> tuple[Subscription, Issued]:
    """The subscription a Kafka record's structured-mode CloudEvent belongs to (by its
    ``type``), and the command it carries; raises ``Refused`` naming the field at fault."""
    headers = {key: bytes(header) for key, header in record.headers or ()}
    return parse_event(record.value, record.key, headers, subscriptions, clock)


def parse_event(
    value: bytes | None,
    key: bytes | None,
    headers: Mapping[str, bytes],
    subscriptions: Mapping[str, Subscription],
    clock: Callable[[], datetime],
) -> tuple[Subscription, Issued]:
    """One structured-mode CloudEvent, however it came (a Kafka record, an HTTP body in the
    embedded mode): the one reading of both doors, so they refuse and apply alike."""
    if value is None:
        raise Refused("the message has no value", field="value")
    if len(value) > MAX_MESSAGE_BYTES:
        raise Refused(
            f"the message is {len(value)} bytes; at most {MAX_MESSAGE_BYTES} are read",
            field="value",
        )
    if key is not None and len(key) > MAX_KEY_BYTES:
        raise Refused(f"the key is longer than {MAX_KEY_BYTES} bytes", field="key")
    plain = plain_event(value, key)
    as_json: Callable[[Any], bytes | str] = data_as_json
    if plain is None:
        try:
            event = from_structured_event(CloudEventMessage(dict(headers), key, value))
        except RecursionError:  # nesting past orjson's 1,024 levels, read by json.loads
            raise Refused("the message nests too deeply to be read", field="value") from None
        except Exception as error:
            raise Refused(f"not a structured CloudEvent: {error}", field="value") from None
        plain, as_json = (event.get_attributes(), event.get_data()), json.dumps
    values, data = plain
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
    )


WIDEST_INT = 2**63  # orjson reads an integer beyond 64 bits as a float; json as an int
# Where a number of at least ``WIDEST_INT`` (about 9.2e18) may be spelt: JSON writes it with
# 19 digits or more before any point, or with an exponent, which follows a digit. A text
# without either holds no such number, and its values need no walk (``_wide_float``): the
# walk was a sixth of reading a message (issue 12). Strings may match too: they are walked.
MAYBE_WIDE = re.compile(rb"[0-9](?:[eE]|[0-9]{18})")


def read_json(value: bytes) -> Any:
    """A message's JSON as ``read_json_strictly`` reads it, by orjson when it can.

    Issue 12: the standard parser, with its hooks, took about 7 µs a message (a decoder
    built per call), orjson about 1. ``services.edge.app.read_body`` is not reused: it applies
    the HTTP body's rules (duplicate keys and deep nesting refused), which a Kafka message
    never had. orjson refuses what the standard reading might take otherwise (a lone
    surrogate, NaN, a BOM, a number beyond a double, nesting past 1,024): that text is read
    by ``read_json_strictly``, so it refuses or reads as before. Where both read a text they
    read the same values (a property test holds it), except an integer beyond 64 bits,
    which orjson reads as a float: a value holding a float that large is read again."""
    try:
        body = orjson.loads(value)
    except orjson.JSONDecodeError:
        return read_json_strictly(value)
    if MAYBE_WIDE.search(value) and _wide_float(body):
        return read_json_strictly(value)
    return body


def read_json_strictly(value: bytes) -> Any:
    """The reading the CloudEvents SDK makes (``json.loads`` of the UTF-8 text), refusing
    numbers beyond a double and NaN or Infinity (``NotPlain``); raises ``ValueError``."""
    return json.loads(value.decode("utf-8"), parse_float=finite, parse_constant=no_constant)


def _wide_float(value: Any) -> bool:
    """Whether a float at least as large as ``WIDEST_INT`` sits anywhere in ``value``
    (walked without recursion: orjson reads nesting up to 1,024 deep)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is float:
            if not -WIDEST_INT < item < WIDEST_INT:
                return True
        elif kind is dict:
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
    return False


def plain_event(value: bytes, key: bytes | None) -> tuple[dict[str, Any], Any] | None:
    """A structured CloudEvent 1.0 of the plain shape, as its attributes (the key added as
    ``partitionkey``, as the SDK's Kafka binding adds it) and its ``data``; ``None`` for
    anything the SDK should judge itself.

    Plain: a JSON object (decoded as the SDK decodes it) with ``specversion`` "1.0", ``id``,
    ``source`` and ``type``; every context attribute a non-empty string; every other name an
    extension name; a ``data`` that is not null; no ``time`` (the SDK parses it with its own
    ISO reader). Each of these is a check the SDK makes and the message passes, so the reading
    is the same; the SDK's default ``time`` (now) is left out, as nothing reads it."""
    try:
        body = read_json(value)
        partitionkey = None if key is None else key.decode("utf-8")
    # Not UTF-8, not JSON or not finite: the SDK says why. A RecursionError is nesting past
    # orjson's limit, which the standard parser cannot read either: the SDK refuses it too.
    except (ValueError, RecursionError):
        return None
    if not isinstance(body, dict) or "time" in body or not body.keys() >= REQUIRED_ATTRIBUTES:
        return None
    data = body.pop("data", None)
    if data is None or body["specversion"] != "1.0":
        return None
    for name, attribute in body.items():
        if name in REQUIRED_ATTRIBUTES or name in OPTIONAL_ATTRIBUTES:
            if not isinstance(attribute, str) or not attribute:
                return None
        elif not EXTENSION_NAME.fullmatch(name):
            return None
    if partitionkey is not None:
        body["partitionkey"] = partitionkey
    return body, data


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
