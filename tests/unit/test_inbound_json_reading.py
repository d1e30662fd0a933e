"""A Kafka message's JSON read by orjson reads as the standard parser reads it:
the same values, of the same types, or a refusal where the standard reading refuses.

``read_json_strictly`` is the reading every message had before (``json.loads`` of the UTF-8
text, numbers beyond a double and NaN refused); ``read_json`` must agree with it on any text.
"""

import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from services.kafka.inbound import fast_cloudevent_reading as fast_reading
from services.kafka.inbound.fast_cloudevent_reading import (
    plain_event,
    read_json,
    read_json_strictly,
)

WIDE = st.integers(min_value=-(2**70), max_value=2**70) | st.sampled_from(
    [2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1]
)
SCALARS = (
    st.none() | st.booleans() | WIDE | st.floats(allow_nan=False, allow_infinity=False) | st.text()
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def same(a: Any, b: Any) -> bool:
    """Equal, with the same types at every level: their reprs tell 1 from 1.0 and True, -0.0
    from 0.0, and keep the keys' order."""
    return repr(a) == repr(b)


def reading(read: Any, text: bytes) -> tuple[str, Any]:
    try:
        return "value", read(text)
    except ValueError:  # json's, orjson's, UnicodeDecodeError, NotPlain: all ValueErrors
        return "refused", None


def agree(text: bytes) -> None:
    fast, strict = reading(read_json, text), reading(read_json_strictly, text)
    assert fast[0] == strict[0], text
    assert same(fast[1], strict[1]), text


@settings(max_examples=400)
@given(VALUES, st.booleans())
def test_any_json_value_reads_the_same_both_ways(value: Any, ascii_only: bool) -> None:
    agree(json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass"))


@settings(max_examples=400)
@given(st.binary(max_size=64))
def test_any_bytes_are_read_or_refused_the_same_both_ways(text: bytes) -> None:
    agree(text)


@settings(max_examples=300)
@given(VALUES, st.integers(min_value=0, max_value=200), st.binary(min_size=1, max_size=3))
@example(1, 0, b"\xef\xbb\xbf")
def test_a_cut_or_spliced_text_reads_or_is_refused_the_same_both_ways(
    value: Any, at: int, splice: bytes
) -> None:
    text = json.dumps(value).encode()
    at = min(at, len(text))
    agree(text[:at])
    agree(text[:at] + splice + text[at:])


def test_hostile_texts_read_or_are_refused_the_same_both_ways() -> None:
    for text in [
        b'{"a": 1, "a": 2}',  # the last of two equal keys, both ways
        b'"\\ud800"',  # a lone surrogate: orjson refuses, json reads it
        b'"\\udc00\\ud800"',
        b"[NaN]",
        b"[Infinity, -Infinity]",
        b"1e400",
        b"-1e400",
        b"[1e308, 1e-400, -0.0, -0]",
        b"18446744073709551616",  # beyond 64 bits: orjson would read a float
        b"-9223372036854775809",
        b"[18446744073709551615, 9223372036854775807]",
        b'{"x": 1E19}',
        b"\xef\xbb\xbf{}",  # a BOM
        b'"\x01"',  # a raw control character in a string
        b"\xed\xa0\x80",  # a surrogate spelt in UTF-8
        b'{"a":"\xff"}',
        b" \t\r\n{} \n",
        b"{}x",
        b"",
        b"[" * 600 + b"]" * 600,
    ]:
        agree(text)


EVENT: dict[str, Any] = {
    "specversion": "1.0",
    "id": "e-1",
    "source": "urn:test",
    "type": "evaluation.feedback.v1.RecordFeedback",
    "tenantid": "t",
    "actor": "a",
    "data": {"projectId": "p", "subjectKind": "run", "subjectRef": "r", "kind": "rating"},
}


@settings(max_examples=200)
@given(st.dictionaries(st.text(max_size=8), VALUES, max_size=3), SCALARS)
def test_a_message_reads_as_the_strict_reading_reads_it(extra: dict[str, Any], rating: Any) -> None:
    """Through ``plain_event``, what becomes of a message, whichever reading is used: the
    same attributes and data, or left to the SDK alike."""
    event = EVENT | extra | {"data": EVENT["data"] | {"rating": rating}}
    text = json.dumps(event).encode()
    fast = plain_event(text, b"k")
    fast_reading.read_json = read_json_strictly  # the reading every message had before
    try:
        before = plain_event(text, b"k")
    finally:
        fast_reading.read_json = read_json
    assert same(fast, before)


@settings(max_examples=300)
@given(
    st.integers(min_value=2**63, max_value=2**80)
    | st.floats(min_value=2.0**63, allow_infinity=False),
    st.booleans(),
)
@example(2**63, False)
@example(9.3e18, True)
def test_every_number_orjson_may_widen_is_walked(magnitude: float, negative: bool) -> None:
    """``read_json`` walks a value for a float past 64 bits only where the text
    may spell one (``MAYBE_WIDE``): every number at least that large, as JSON spells it,
    anywhere in a message, is such a text."""
    number = -magnitude if negative else magnitude
    for text in (json.dumps(number), json.dumps({"data": {"rating": number}}), f"[1, {number}]"):
        assert fast_reading.MAYBE_WIDE.search(text.encode()), text
