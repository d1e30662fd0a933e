"""Goal references (SPEC M01–M06): strict from a client, tolerant from a record."""

import pytest
from pydantic import BaseModel, ValidationError

from contracts.goals import (
    GoalKind,
    GoalRef,
    GoalRefText,
    parse_goal_ref,
    read_goal_ref,
    read_goal_refs,
)


@pytest.mark.parametrize(
    ("text", "kind", "ident"),
    [
        ("charter:answers-grounded", GoalKind.charter, "answers-grounded"),
        (" task : T-12 ", GoalKind.task, "T-12"),  # M04: trimmed
        ("project:7f1c", GoalKind.project, "7f1c"),  # M03: by id
        ("setpoint:inbox_age", GoalKind.setpoint, "inbox_age"),
        ("task:a:b", GoalKind.task, "a:b"),  # M04: split on the first colon only
    ],
)
def test_a_reference_parses_into_its_kind_and_id(text: str, kind: GoalKind, ident: str) -> None:
    ref = parse_goal_ref(text)
    assert ref == GoalRef(kind, ident)
    assert str(ref) == f"{kind.value}:{ident}"  # M01: kind:id on the wire


@pytest.mark.parametrize(
    ("text", "why"),
    [("charter", "no colon"), ("charter:  ", "empty id"), ("goal:x", "unknown goal kind")],
)
def test_a_malformed_reference_from_a_client_is_an_error(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):  # M04, M05
        parse_goal_ref(text)


def test_a_malformed_reference_in_a_body_is_refused_naming_the_field() -> None:
    class Body(BaseModel):
        serves: list[GoalRefText]

    with pytest.raises(ValidationError) as caught:
        Body(serves=["charter:ok", "wish:x"])
    assert caught.value.errors()[0]["loc"] == ("serves", 1)
    assert Body(serves=[" charter : ok "]).serves == ["charter:ok"]  # stored in one spelling


@pytest.mark.parametrize("stored", ["wish:x", "charter", "charter:", None, 3, ""])
def test_from_a_record_anything_unreadable_is_no_reference(stored: object) -> None:
    assert read_goal_ref(stored) is None  # M05


def test_a_recorded_list_keeps_what_reads_in_order_once() -> None:
    refs = read_goal_refs(["task:1", "old:2", "charter:a", "task:1"])
    assert refs == (GoalRef(GoalKind.task, "1"), GoalRef(GoalKind.charter, "a"))
    assert read_goal_refs(None) == ()  # M06: a record naming no goal has none
