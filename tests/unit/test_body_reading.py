"""``services.edge.json_bodies.read_body`` (orjson first) reads a body as the rules say,
whichever parser ends up reading it: nesting at most ``MAX_DEPTH`` levels, no key twice in one
object, no NaN or Infinity, anything else not JSON refused naming why. The reference is the
plain path beside it, ``read_strictly`` (the text's nesting counted first, then the standard
parser with hooks), and ``read_body`` must answer what it answers, value or refusal, for any
text, including texts full of colons and brackets inside strings and keys spelt twice at any
depth."""

import json
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from contracts.errors import Refused
from services.edge.json_bodies import MAX_DEPTH, read_body, read_strictly

pytestmark = pytest.mark.unit


def outcome(read: Any, raw: bytes) -> tuple[str, Any]:
    try:
        return "value", read(raw)
    except Refused as refused:
        return "refused", (refused.message, refused.details.get("field"))


# Strings that look like JSON's punctuation, so a count over the text would be fooled.
tricky = st.sampled_from(["a:b", '"', '{"k":1}', "[[", "]}", "\\", "2026-11-30T08:00:00Z", ""])
texts = st.text(max_size=8) | tricky
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=25,
)


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    """JSON text, sometimes with a key spelt twice somewhere, sometimes wrapped deeper than
    the limit, sometimes cut short or given a NaN."""
    raw = json.dumps(draw(values), ensure_ascii=draw(st.booleans())).encode()
    change = draw(st.sampled_from(["none", "twice", "deep", "cut", "nan"]))
    if change == "twice" and b'":' in raw:
        at = raw.index(b"{") + 1 if b"{" in raw else 0
        key = json.dumps(draw(texts)).encode()
        raw = raw[:at] + key + b":1," + key + b":2," + raw[at:]
    elif change == "deep":
        depth = draw(st.integers(MAX_DEPTH - 2, MAX_DEPTH + 2))
        raw = b'{"a":' * depth + raw + b"}" * depth
    elif change == "cut" and raw:
        raw = raw[: draw(st.integers(0, len(raw) - 1))]
    elif change == "nan":
        raw = b'{"x":[NaN],"y":' + raw + b"}"
    return raw


@given(bodies())
def test_a_body_is_read_or_refused_as_the_rules_say(raw: bytes) -> None:
    expected = outcome(read_strictly, raw)
    read = outcome(lambda r: read_body(r)[0], raw)
    assert read == expected


@given(bodies())
def test_what_orjson_read_it_writes_back_as_the_standard_writer_means(raw: bytes) -> None:
    """The strict reading of a command is of JSON text: orjson's text of what orjson read
    reads back the same as json.dumps' text of it."""
    try:
        data, by_orjson = read_body(raw)
    except Refused:
        return
    if by_orjson:
        assert json.loads(orjson.dumps(data)) == json.loads(json.dumps(data))


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a":1,"a":2}',
        b'{"t":"08:00","a":{"b":1,"b":1}}',
        b'[{"k":"x:y"},{"k":1,"k":2}]',
        b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1),
        b"[" * 2000 + b"]" * 2000,
        b'{"a":"' + b"[" * 100 + b'"}',
        b'{"n":1e400}',
        b'{"n":NaN}',
        b"",
    ],
)
def test_the_hard_cases(raw: bytes) -> None:
    assert outcome(lambda r: read_body(r)[0], raw) == outcome(read_strictly, raw)
