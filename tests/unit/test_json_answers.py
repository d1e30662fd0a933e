"""``services.edge.json_answers.answer_json`` writes what FastAPI's own JSON answer writes
(``plain_answer_json``): the same bytes for every answer made of text, integers, booleans,
null, UUIDs and lists and dicts of them, and the same JSON value when floats are in it."""

import json
import uuid
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.edge.json_answers import answer_json, plain_answer_json

pytestmark = pytest.mark.unit

# Text a JSON answer can hold: any code point but a lone surrogate (neither writer takes one).
texts = st.text(st.characters(codec="utf-8"), max_size=12)
exact = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | texts | st.uuids()


def answers(scalars: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
        max_leaves=20,
    )


@given(answers(exact))
def test_an_answer_without_floats_is_written_byte_for_byte_as_fastapi_writes_it(
    answer: Any,
) -> None:
    assert answer_json(answer) == plain_answer_json(answer)


@given(answers(exact | st.floats(allow_nan=False, allow_infinity=False)))
def test_an_answer_with_floats_is_the_same_json_value(answer: Any) -> None:
    assert json.loads(answer_json(answer)) == json.loads(plain_answer_json(answer))


def test_the_feedback_answer_is_written_as_fastapi_writes_it() -> None:
    answer = {"feedbackId": uuid.uuid4(), "position": "AbC-_9", "created": None}
    assert answer_json(answer) == plain_answer_json(answer)
