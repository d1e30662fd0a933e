"""The charter's strict parse (SPEC M07–M16): every refusal refuses the whole document and
names the line; over budget is a finding."""

import pytest

from contracts.errors import Refused
from services.appraisal.charter import CHARTER_BUDGET, parse_charter
from services.appraisal.setpoints import SensorKind, SetpointError, Unit, parse_setpoint

GOOD = """
[[line]]
id = "answers-grounded"
text = "Answers rest on sources the asker can read."

[[line]]
id = " inbox-short "
text = "Nobody's report waits long."
sensor = { kind = "request_closure", setpoint = "1d12h" }

[[line]]
id = "evals-green"
text = "The eval cases pass."
[line.sensor]
kind = "intervention_rate"
setpoint = "20%"
"""


def refused(document: str) -> Refused:
    with pytest.raises(Refused) as caught:
        parse_charter(document)
    return caught.value


def test_order_is_rank_and_ids_are_trimmed() -> None:  # M07
    charter = parse_charter(GOOD)
    assert [(ln.rank, ln.id) for ln in charter.lines] == [
        (1, "answers-grounded"),
        (2, "inbox-short"),
        (3, "evals-green"),
    ]
    sensor = charter.lines[1].sensor
    assert sensor is not None
    assert sensor.kind is SensorKind.request_closure
    assert sensor.setpoint.value == 36 * 3600
    assert charter.findings == ()


def test_an_empty_document_is_an_empty_charter() -> None:  # M16
    assert parse_charter("").lines == ()


def test_an_unknown_key_on_a_line_is_refused_naming_the_line() -> None:  # M08
    error = refused(
        '[[line]]\nid = "a"\ntext = "t"\n[[line]]\nid = "b"\ntext = "u"\npriority = 3\n'
    )
    assert error.details["line"] == 2
    assert error.details["lineId"] == "b"
    assert error.field == "line[2].priority"


def test_a_misspelled_table_is_refused() -> None:  # M08
    error = refused('[[lines]]\nid = "a"\ntext = "t"\n')
    assert error.field == "lines"


def test_an_unknown_sensor_kind_is_refused_naming_the_line() -> None:  # M09, M10
    error = refused('[[line]]\nid = "a"\ntext = "t"\nsensor = { kind = "cost", setpoint = 3 }\n')
    assert error.details["line"] == 1
    assert error.field == "line[1].sensor.kind"


def test_an_unknown_sensor_key_is_refused_naming_the_line() -> None:  # M08
    doc = (
        '[[line]]\nid = "a"\ntext = "t"\n'
        'sensor = { kind = "outbox_waiting", setpoint = 3, weight = 1 }\n'
    )
    assert refused(doc).field == "line[1].sensor.weight"


@pytest.mark.parametrize(
    ("kind", "setpoint"),
    [("request_closure", "5"), ("request_closure", 5), ("outbox_waiting", '"2d"'),
     ("intervention_rate", "1.5"), ("question_latency", '"3 days"'), ("outbox_waiting", "2.5")],
)  # fmt: skip
def test_a_setpoint_in_the_wrong_unit_is_refused_naming_the_line(kind: str, setpoint: str) -> None:
    doc = (
        '[[line]]\nid = "x"\ntext = "t"\n[[line]]\nid = "y"\ntext = "u"\n'
        f'sensor = {{ kind = "{kind}", setpoint = {setpoint} }}\n'
    )
    error = refused(doc)  # M10
    assert error.details["line"] == 2
    assert error.details["lineId"] == "y"
    assert error.field == "line[2].sensor.setpoint"


@pytest.mark.parametrize(
    ("kind", "setpoint"),
    [("request_closure", '"0h"'), ("outbox_waiting", "0"), ("intervention_rate", '"0%"'),
     ("intervention_rate", "0.0")],
)  # fmt: skip
def test_a_setpoint_of_zero_is_refused_naming_the_line(kind: str, setpoint: str) -> None:
    doc = f'[[line]]\nid = "z"\ntext = "t"\nsensor = {{ kind = "{kind}", setpoint = {setpoint} }}\n'
    error = refused(doc)  # M11
    assert error.details["line"] == 1
    assert "zero" in error.message


def test_a_duplicate_id_after_trimming_is_refused_naming_the_line() -> None:  # M13
    error = refused('[[line]]\nid = "a"\ntext = "t"\n[[line]]\nid = " a "\ntext = "u"\n')
    assert error.details["line"] == 2
    assert error.field == "line[2].id"
    assert "line 1" in error.message


def test_an_empty_id_is_refused_naming_the_line() -> None:  # M13
    error = refused('[[line]]\nid = "a"\ntext = "t"\n[[line]]\nid = "  "\ntext = "u"\n')
    assert error.details["line"] == 2
    assert error.field == "line[2].id"


def test_an_empty_text_is_refused_naming_the_line() -> None:  # M13
    error = refused('[[line]]\nid = "a"\ntext = " "\n')
    assert error.details["line"] == 1
    assert error.details["lineId"] == "a"
    assert error.field == "line[1].text"


def test_two_lines_with_the_same_sensor_kind_are_refused_naming_the_line() -> None:  # M13
    doc = (
        '[[line]]\nid = "a"\ntext = "t"\nsensor = { kind = "outbox_waiting", setpoint = 3 }\n'
        '[[line]]\nid = "b"\ntext = "u"\nsensor = { kind = "outbox_waiting", setpoint = 9 }\n'
    )
    error = refused(doc)
    assert error.details["line"] == 2
    assert error.field == "line[2].sensor.kind"


def test_invalid_toml_is_refused() -> None:  # M15: never a partial charter
    assert refused('[[line]]\nid = "a"\nid = "b"\n').field == "body"


def test_over_budget_is_a_finding_not_a_refusal() -> None:  # M14
    text = "x" * (CHARTER_BUDGET + 1)
    charter = parse_charter(f'[[line]]\nid = "long"\ntext = "{text}"\n')
    assert len(charter.lines) == 1
    assert charter.findings
    assert "over budget" in charter.findings[0]


@pytest.mark.parametrize(
    ("unit", "raw", "value"),
    [
        (Unit.duration, "24h", 86_400),
        (Unit.duration, "1w2d3h4m5s", 604_800 + 2 * 86_400 + 3 * 3600 + 4 * 60 + 5),
        (Unit.number, 4, 4),
        (Unit.number, "12", 12),
        (Unit.rate, 0.2, 0.2),
        (Unit.rate, "20%", 0.2),
        (Unit.rate, "0.25", 0.25),
        (Unit.rate, 1, 1.0),
    ],
)
def test_the_setpoint_grammar(unit: Unit, raw: object, value: float) -> None:  # M12
    assert parse_setpoint(unit, raw).value == pytest.approx(value)


@pytest.mark.parametrize(
    ("unit", "raw"),
    [(Unit.duration, "24"), (Unit.duration, "h"), (Unit.number, -1), (Unit.number, True),
     (Unit.rate, "120%"), (Unit.rate, -0.1), (Unit.rate, "lots")],
)  # fmt: skip
def test_setpoints_outside_the_grammar_are_refused(unit: Unit, raw: object) -> None:  # M12
    with pytest.raises(SetpointError):
        parse_setpoint(unit, raw)


def test_arrays_nested_hundreds_deep_are_refused_not_a_500() -> None:
    """Found by attacking the route: tomllib reads nesting recursively, and 500 levels (in a
    document under the size bound) raised RecursionError through the command bus."""
    with pytest.raises(Refused) as refused:
        parse_charter("a = " + "[" * 500 + "]" * 500)
    assert refused.value.field == "body"
    assert "nests too deeply" in str(refused.value)
