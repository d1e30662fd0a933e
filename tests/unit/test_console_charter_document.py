"""The charter editor's document: what a person typed, in the order the lines stand, reads
back through the charter's own parse as the same lines (SPEC M07, M12; decisions D92)."""

import pytest
from starlette.datastructures import FormData

from contracts.errors import Refused
from services.appraisal.charter import parse_charter
from services.console.pages.charter import document_of, posted_lines


def form(*lines: tuple[str, str, str, str]) -> FormData:
    return FormData(
        [
            (name, value)
            for line in lines
            for name, value in zip(("id", "text", "kind", "setpoint"), line, strict=True)
        ]
    )


def test_the_lines_read_back_in_their_order_with_what_was_typed() -> None:
    lines = posted_lines(
        form(
            ("quiet", 'She said "no" \\ then\tleft.', "intervention_rate", "20%"),
            ("few", "Few drafts wait.", "outbox_waiting", "7"),
            ("", "", "", ""),  # the empty slot: no line
            ("short", "Nobody waits — long. ✓", "request_closure", "1d12h"),
            ("plain", "No sensor here.", "", ""),
        )
    )
    charter = parse_charter(document_of(lines))
    assert [(line.rank, line.id) for line in charter.lines] == [
        (1, "quiet"), (2, "few"), (3, "short"), (4, "plain"),
    ]  # fmt: skip
    assert charter.lines[0].text == 'She said "no" \\ then\tleft.'
    assert charter.lines[0].sensor is not None
    assert charter.lines[0].sensor.setpoint.value == pytest.approx(0.2)
    assert charter.lines[1].sensor is not None
    assert charter.lines[1].sensor.setpoint.value == 7
    assert charter.lines[2].sensor is not None
    assert charter.lines[2].sensor.setpoint.value == 36 * 3600
    assert charter.lines[3].sensor is None


def test_a_setpoint_without_a_kind_is_judged_by_the_parse_not_dropped() -> None:
    lines = posted_lines(form(("few", "Few drafts wait.", "", "5")))
    with pytest.raises(Refused) as refused:
        parse_charter(document_of(lines))
    assert refused.value.details["line"] == 1
    assert refused.value.field == "line[1].sensor.kind"


def test_a_form_whose_columns_disagree_is_refused() -> None:
    uneven = FormData([("id", "a"), ("text", "A."), ("kind", ""), ("setpoint", ""), ("id", "b")])
    with pytest.raises(Refused):
        posted_lines(uneven)
