"""``read_cloudevent`` (the fast reading of a structured CloudEvent) reads every message as its
reference, the CloudEvents SDK's own reading (``sdk_cloudevent``), reads it: the same
attributes, the same data, data written again as the same JSON values, or the same refusal."""

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from contracts.errors import Refused
from services.kafka.inbound.fast_cloudevent_reading import read_cloudevent, sdk_cloudevent

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)
ATTRIBUTE = st.text(max_size=8) | st.sampled_from(["", "a", "é\u2028"]) | st.integers(0, 3)
NAMES = st.sampled_from(
    ["subject", "datacontenttype", "dataschema", "tenantid", "actor", "traceparent", "time",
     "partitionkey", "Upper", "under_score", "data_base64"]
)  # fmt: skip
EVENTS = st.fixed_dictionaries(
    {
        "specversion": st.sampled_from(["1.0", "1.0", "1.0", "0.3", 1.0]),
        "id": ATTRIBUTE,
        "source": ATTRIBUTE,
        "type": st.just("evaluation.feedback.v1.RecordFeedback") | ATTRIBUTE,
        "data": VALUES,
    }
).flatmap(lambda event: st.dictionaries(NAMES, ATTRIBUTE, max_size=3).map(event.__or__))


def same(a: Any, b: Any) -> bool:
    """Equal, with the same types at every level (1 is not 1.0 nor True), keys in order."""
    return repr(a) == repr(b)


def reading(value: bytes, key: bytes | None, read: Any) -> tuple[str, Any]:
    try:
        attributes, data, as_json = read(value, key, {})
    except Refused as refused:
        return "refused", refused.details.get("field")
    if "time" not in json.loads(value):
        attributes.pop("time", None)  # the SDK's default (now); nothing reads it
    return "read", (attributes, data, json.loads(as_json(data)))


@settings(max_examples=400, deadline=None)
@given(EVENTS, st.none() | st.binary(max_size=6), st.booleans())
def test_a_message_is_read_as_the_cloudevents_sdk_reads_it(
    event: dict[str, Any], key: bytes | None, ascii_only: bool
) -> None:
    value = json.dumps(event, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    fast, reference = reading(value, key, read_cloudevent), reading(value, key, sdk_cloudevent)
    assert same(fast, reference), value
