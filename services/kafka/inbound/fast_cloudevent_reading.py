"""Reading a structured-mode CloudEvent from a message's bytes: the fast twin of the CloudEvents
SDK's ``from_structured_event``, behind one function, ``read_cloudevent``.

Reference (the plain path, ``sdk_cloudevent``): the SDK's reading, its JSON format (``json.loads``
of the UTF-8 text), an attribute check per attribute and the key added as ``partitionkey``; the
data written again for the command's strict reading by ``json.dumps``. It costs more than the
rest of reading a message. An event of the plain shape (``plain_event``) is read here by orjson
instead, with the checks the SDK would pass it by, and its data written by orjson; anything
else (a ``time``, ``data_base64``, another spec version, an odd attribute, a text orjson reads
otherwise than ``json.loads``) still goes through the SDK, so a message is refused or read as
the reference reads it (property tests: ``tests/unit/test_inbound_json_reading`` and
``tests/unit/test_fast_cloudevent_reading``).
"""

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import orjson
from cloudevents.core.bindings.kafka import KafkaMessage as CloudEventMessage
from cloudevents.core.bindings.kafka import from_structured_event

from contracts.errors import Refused

# The attributes the SDK checks to be non-empty strings (CloudEvents 1.0 context attributes).
REQUIRED_ATTRIBUTES = frozenset({"id", "source", "type", "specversion"})
OPTIONAL_ATTRIBUTES = frozenset({"datacontenttype", "dataschema", "subject"})
EXTENSION_NAME = re.compile(r"[a-z0-9]+")  # CloudEvents 1.0: lowercase letters and digits
WIDEST_INT = 2**63  # orjson reads an integer beyond 64 bits as a float; json as an int
# Where a number of at least ``WIDEST_INT`` (about 9.2e18) may be spelt: JSON writes it with
# 19 digits or more before any point, or with an exponent, which follows a digit. A text
# without either holds no such number, and its values need no walk (``_wide_float``), which
# would cost a good part of reading a message. Strings may match too: they are walked.
MAYBE_WIDE = re.compile(rb"[0-9](?:[eE]|[0-9]{18})")

# A CloudEvent read: its attributes (the key added as ``partitionkey``), its ``data``, and how
# that data is written as JSON again for the command's strict reading.
Read = tuple[dict[str, Any], Any, Callable[[Any], bytes | str]]


class NotPlain(ValueError):
    """A value the fast reading leaves to the SDK."""


def read_cloudevent(value: bytes, key: bytes | None, headers: Mapping[str, bytes]) -> Read:
    """The CloudEvent in ``value``, read as the SDK reads it; raises ``Refused`` (field
    ``value``) for what the SDK refuses."""
    plain = plain_event(value, key)
    if plain is None:
        return sdk_cloudevent(value, key, headers)
    attributes, data = plain
    return attributes, data, data_as_json


def sdk_cloudevent(value: bytes, key: bytes | None, headers: Mapping[str, bytes]) -> Read:
    """The reference: the CloudEvents SDK's own reading."""
    try:
        event = from_structured_event(CloudEventMessage(dict(headers), key, value))
    except RecursionError:  # nesting past orjson's 1,024 levels, read by json.loads
        raise Refused("the message nests too deeply to be read", field="value") from None
    except Exception as error:
        if fails_on_time(value, key, headers):
            message = f"time: not an RFC 3339 instant the SDK reads: {error}"
            raise Refused(message, field="time") from None
        raise Refused(f"not a structured CloudEvent: {error}", field="value") from None
    return event.get_attributes(), event.get_data(), json.dumps


def fails_on_time(value: bytes, key: bytes | None, headers: Mapping[str, bytes]) -> bool:
    """Whether the SDK refused the event for its ``time`` alone (year 0, year 10000, no ISO
    instant): the same event without it reads. The refusal then names ``time``, as every other
    attribute is named (``parsing.attributes``); asked only once the SDK has refused."""
    try:
        body = read_json(value)
    except (ValueError, RecursionError):
        return False
    if not isinstance(body, dict) or "time" not in body:
        return False
    del body["time"]
    try:
        from_structured_event(CloudEventMessage(dict(headers), key, json.dumps(body).encode()))
    except Exception:
        return False
    return True


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


def data_as_json(data: Any) -> bytes | str:
    """The ``data`` of a plain event as JSON text for its model. Plain data has only finite
    numbers, so orjson writes what ``json.dumps`` would mean; an int beyond 64 bits or a lone
    surrogate, which orjson refuses, goes to ``json.dumps``."""
    try:
        return orjson.dumps(data)
    except orjson.JSONEncodeError:
        return json.dumps(data)


def read_json(value: bytes) -> Any:
    """A message's JSON as ``read_json_strictly`` reads it, by orjson when it can.

    ``services.edge.app.read_body`` is not reused: it applies the HTTP body's rules (duplicate
    keys and deep nesting refused), which a Kafka message never had. orjson refuses what the
    standard reading might take otherwise (a lone surrogate, NaN, a BOM, a number beyond a
    double, nesting past 1,024): that text is read by ``read_json_strictly``, so it refuses or
    reads as the standard reading does. Where both read a text they read the same values,
    except an integer beyond 64 bits, which orjson reads as a float: a value holding a float
    that large is read again."""
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


def finite(text: str) -> float:
    """A JSON number as ``json.loads`` reads it, if finite (``1e400`` reads as infinity)."""
    number = float(text)
    if number in (math.inf, -math.inf):
        raise NotPlain(text)
    return number


def no_constant(text: str) -> Any:
    """``NaN``, ``Infinity``: ``json.loads`` reads them, JSON has none."""
    raise NotPlain(text)


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
