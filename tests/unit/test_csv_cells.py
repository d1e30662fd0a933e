"""The one CSV writer keeps OWASP's CSV-injection guidance (decisions D112): a cell a
spreadsheet would take for a formula is written as text, and no other module of the service
writes CSV beside it, so an export added later goes through the same cells."""

import csv
import io
from pathlib import Path

import pytest

from services.bus.audit_csv import FORMULA_STARTS, csv_text, neutralised

ROOT = Path(__file__).resolve().parents[2]
THE_WRITER = ROOT / "services" / "bus" / "audit_csv.py"


@pytest.mark.parametrize(
    "cell", ["@SUM(1+2)", '=HYPERLINK("http://x")', "+1", "-1+2", "\t=1", "\r=1"]
)
def test_a_cell_a_spreadsheet_would_read_as_a_formula_is_written_as_text(cell: str) -> None:
    written = next(csv.reader(io.StringIO(csv_text([[cell, "alice"]]))))
    assert written == ["'" + cell, "alice"]


@pytest.mark.parametrize("cell", ["alice", "", "'quoted", "a=b", "1+2", " =1", "svc@tenant"])
def test_any_other_cell_is_written_as_it_is(cell: str) -> None:
    assert neutralised(cell) == cell
    assert next(csv.reader(io.StringIO(csv_text([[cell]])))) == [cell]


def test_every_cell_is_quoted_so_a_separator_never_starts_a_cell_of_its_own() -> None:
    assert csv_text([["a,=1", "b"]]) == '"a,=1","b"\r\n'


def test_the_formula_starts_are_owasps() -> None:
    assert set(FORMULA_STARTS) == {"=", "+", "-", "@", "\t", "\r"}


def test_no_module_but_the_one_writer_writes_csv() -> None:
    """A CSV export added later writes its rows with ``csv_text``, not a writer of its own."""
    writers = [
        path.relative_to(ROOT).as_posix()
        for folder in ("services", "projections", "contracts")
        for path in (ROOT / folder).rglob("*.py")
        if path != THE_WRITER
        and any(word in path.read_text() for word in ("csv.writer", "DictWriter", "import csv"))
    ]
    assert writers == []
