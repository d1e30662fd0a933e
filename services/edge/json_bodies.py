"""Reading a request body as JSON, fast: orjson first, the standard parser as the reference.

The rules of a body (``read_strictly``, the plain path): nesting at most ``MAX_DEPTH`` levels,
no key twice in one object (which one would win is the parser's accident), no NaN or Infinity
(not JSON), anything else not JSON refused naming why. ``read_body`` answers what
``read_strictly`` answers, value or refusal, for any text (tests/unit/test_body_reading.py),
reading the common body with orjson: a much cheaper parse than the standard one, but one that
keeps the last of two equal keys and says little of what is wrong. So a body orjson refuses,
or in which it found fewer keys than the text spells, is read again by ``read_strictly``,
whose refusal names the duplicate key or the error's place.
"""

import json
import re
from typing import Any

import orjson

from contracts.errors import Refused

# Deeper than any of our contracts nests (a few levels), far below the parser's recursion
# limit: a body nested a thousand deep is refused before it is parsed.
MAX_DEPTH = 32
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_JSON_STRING_OR_KEY = re.compile(rb'"(?:[^"\\]|\\.)*"(\s*:)?', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def parse_json(raw: bytes) -> Any:
    """A request body as JSON, read by the rules above."""
    return read_body(raw)[0]


def read_body(raw: bytes) -> tuple[Any, bool]:
    """``read_strictly``'s reading, and whether orjson read it (then its values are ones
    orjson writes back as they were read: finite numbers, ints within 64 bits, no lone
    surrogates).

    A body orjson read is bounded on what it read (its nesting, its keys), not by scanning
    the text again; every other body has its nesting bounded on the text before the
    standard parser (a recursive one) sees it. Refusals come in the same order and words
    as ``read_strictly``'s."""
    try:
        data = orjson.loads(raw or b"null")
    except orjson.JSONDecodeError:  # orjson's own nesting limit (1,024) lands here too
        return read_strictly(raw), False
    try:
        keys = _keys_within(data, MAX_DEPTH)
    except _TooDeep:
        raise _too_deep() from None
    # Each key read was spelt, and each key spelt is followed by a colon, which only a key
    # (outside strings) is: when the text has no more colons than keys were read, no key
    # was spelt twice. Colons inside strings (times, URLs) call for the exact count.
    if keys != raw.count(b":") and keys != _keys_spelt(raw):
        return read_strictly(raw), False
    return data, True


def read_strictly(raw: bytes) -> Any:
    """The plain reading: the text's nesting bounded, then the standard parser with hooks
    that refuse a key given twice and the constants JSON does not have."""
    if nesting_depth(raw) > MAX_DEPTH:
        raise _too_deep()
    try:
        return json.loads(raw or b"null", object_pairs_hook=_unique_keys, parse_constant=_not_json)
    except ValueError as exc:
        raise Refused(f"the body is not JSON: {exc}", field="body") from None


def nesting_depth(raw: bytes) -> int:
    """How deeply arrays and objects nest in a JSON text, brackets inside strings aside."""
    brackets = _JSON_STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    depth = deepest = 0
    for byte in brackets:
        depth += 1 if byte in b"[{" else -1
        deepest = max(deepest, depth)
    return deepest


class _TooDeep(Exception):
    pass


def _too_deep() -> Refused:
    return Refused(f"the body nests deeper than {MAX_DEPTH} levels", field="body")


def _keys_within(value: Any, levels: int) -> int:
    """How many object keys ``value`` holds at every level; ``_TooDeep`` if its arrays and
    objects nest more than ``levels`` deep (what ``nesting_depth`` counts on the text)."""
    if isinstance(value, dict):
        if not levels:
            raise _TooDeep
        keys = len(value)
        for each in value.values():
            if isinstance(each, dict | list):
                keys += _keys_within(each, levels - 1)
        return keys
    if isinstance(value, list):
        if not levels:
            raise _TooDeep
        keys = 0
        for each in value:
            if isinstance(each, dict | list):
                keys += _keys_within(each, levels - 1)
        return keys
    return 0


def _keys_spelt(raw: bytes) -> int:
    """How many object keys a (valid) JSON text spells: strings followed by a colon. Each
    match consumes a whole string, so a quote or colon inside one is never miscounted."""
    colons = _JSON_STRING_OR_KEY.findall(raw)  # per string: b":" after a key, else b""
    return len(colons) - colons.count(b"")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise Refused(f"the key {key!r} appears more than once", field=key)
        found[key] = value
    return found


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")
