"""How an export's item becomes CSV cells and JSON Lines (decisions D210, D112)."""

import csv
import io
import json

from services.edge.exports import Export, cell, encoded, value_at


async def no_page(conn: object, before: int | None) -> tuple[list[dict[str, object]], None]:
    return [], None


async def no_count(conn: object) -> int:
    return 0


EXPORT = Export("things", ("id", "review.by", "steps", "done"), no_page, no_count)  # type: ignore[arg-type]
ITEM = {
    "id": "=1+2",
    "review": {"by": "alice"},
    "steps": [{"step": "drafted"}],
    "done": False,
    "position": 42,
}


def test_a_nested_field_is_read_by_its_dotted_path_and_a_missing_one_is_none() -> None:
    assert value_at(ITEM, "review.by") == "alice"
    assert value_at(ITEM, "review.at") is None
    assert value_at(ITEM, "id.more") is None


def test_a_cell_is_empty_for_none_json_for_a_list_and_words_for_a_boolean() -> None:
    assert [cell(None), cell(True), cell(3), cell([{"a": 1}])] == ["", "true", "3", '[{"a":1}]']


def test_a_csv_row_is_neutralised_and_a_json_line_keeps_the_text_but_no_position() -> None:
    (row,) = csv.reader(io.StringIO(encoded(EXPORT, "csv", [ITEM])))
    assert row == ["'=1+2", "alice", '[{"step":"drafted"}]', "false"]
    (line,) = encoded(EXPORT, "jsonl", [ITEM]).splitlines()
    assert json.loads(line) == {k: v for k, v in ITEM.items() if k != "position"}
