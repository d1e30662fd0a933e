"""The scalar types every door reads with (``contracts.scalars``), as pure rules; and what the
store already holds is read back as it was accepted, whatever the door checks now."""

import sys
import unicodedata
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from contracts.neighbours import DriftDetected, RunCompleted
from contracts.scalars import (
    MAX_MAGNITUDE,
    Count,
    DatasetVersion,
    Day,
    Instant,
    MaybeArtifactRef,
    Measure,
    Name,
    PathNumber,
    is_blank,
)
from services.store.event_store import ContractAsJSON

HEX = "ab" * 32


def refused(kind: Any, value: Any) -> bool:
    try:
        TypeAdapter(kind).validate_python(value)
    except ValidationError:
        return True
    return False


@pytest.mark.parametrize("text", ["", " ", "\u200b", "\u200c\u200d", "\u2060", "\ufeff",
                                  " \u200b\t", "\u00ad", "\u200e\u200f", "\u3000"])  # fmt: skip
def test_whitespace_and_zero_width_characters_alone_are_blank(text: str) -> None:
    assert is_blank(text)
    assert refused(Name, text)


@pytest.mark.parametrize("text", ["a", " a ", "\u200ba", "٣", "²"])
def test_a_visible_character_is_not_blank(text: str) -> None:
    assert not is_blank(text)
    assert not refused(Name, text)


def test_blank_is_exactly_whitespace_and_format_characters_whatever_comes_first() -> None:
    """The answer at the first character is the rule's: every character alone, before a
    visible one and after one."""
    for char in map(chr, range(sys.maxunicode + 1)):
        blank = char.isspace() or unicodedata.category(char) == "Cf"
        assert (is_blank(char), is_blank(char + "a"), is_blank("a" + char)) == (
            blank,
            False,
            False,
        ), repr(char)


@pytest.mark.parametrize(
    "value",
    ["0001-01-01T00:00:00+23:59", "9999-12-31T23:59:59-00:01", "2026-11-30T10:00:00",
     "2026-11-30", "NaN"],
)  # fmt: skip
def test_an_instant_without_offset_or_outside_years_one_to_9999_in_utc_is_refused(
    value: str,
) -> None:
    assert refused(Instant, value)


@pytest.mark.parametrize(
    "value", ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00-23:59", "9999-12-31T23:59:59+23:59"]
)
def test_an_instant_at_the_edges_of_years_one_to_9999_in_utc_is_taken(value: str) -> None:
    assert not refused(Instant, value)


@pytest.mark.parametrize(
    "value", ["NaN", "Infinity", "-Infinity", "1e400", float("nan"), 1.7e308, MAX_MAGNITUDE * 2]
)
def test_a_measure_is_finite_and_bounded(value: Any) -> None:
    assert refused(Measure, value)
    assert not refused(Measure, MAX_MAGNITUDE)
    assert not refused(Measure, -MAX_MAGNITUDE)


@pytest.mark.parametrize("written", ["1.0", "+1", "01", "1_0", "١", " 1", "1 ", "0x1", ""])
def test_a_number_in_a_path_is_written_one_way(written: str) -> None:
    assert refused(PathNumber, written)


def test_a_canonical_number_in_a_path_is_read() -> None:
    assert TypeAdapter(PathNumber).validate_python("10") == 10
    assert TypeAdapter(PathNumber).validate_python("0") == 0


@pytest.mark.parametrize("written", ["2026-11-30T00:00:00", "2026-11-3٠", "20261130", "1700000000"])
def test_a_day_is_its_date_alone(written: str) -> None:
    assert refused(Day, written)


def test_an_artifact_reference_is_taken_in_its_one_spelling_only() -> None:
    adapter = TypeAdapter(MaybeArtifactRef)
    assert adapter.validate_python(f"ARTIFACT:SHA256:{HEX.upper()}") == f"artifact:sha256:{HEX}"
    assert adapter.validate_python("urn:elsewhere:1") == "urn:elsewhere:1"
    for malformed in ("artifact:x", "artifact:sha256:12", f"artifact:md5:{HEX}"):
        assert refused(MaybeArtifactRef, malformed)


@pytest.mark.parametrize("kind", [Measure, Count, DatasetVersion])
@pytest.mark.parametrize("value", [True, False, "1_0", "\u0661", "0x10", "1 0", ""])
def test_a_number_is_no_boolean_nor_a_spelling_json_does_not_have(kind: Any, value: Any) -> None:
    """D08: ``true`` is no 1 and ``1_0`` no 10, though Python reads both so."""
    assert refused(kind, value)


@pytest.mark.parametrize("kind", [Measure, Count, DatasetVersion])
def test_a_number_or_a_decimal_string_is_read(kind: Any) -> None:
    """Neighbours are read tolerantly: a number written as a decimal string is still a number."""
    assert TypeAdapter(kind).validate_python(12) == 12
    assert TypeAdapter(kind).validate_python("12") == 12
    assert TypeAdapter(kind).validate_python(" 12 ") == 12


def test_a_run_stored_before_the_door_checked_its_scalars_reads_back_as_it_was() -> None:
    """Nothing already accepted is lost: a stored RunCompleted with what the door now refuses
    (a year-0 instant in UTC, a malformed artifact reference, a zero-width id, no offset) is
    read back by the store as it was accepted."""
    stored = {"runId": "r-1", "agentId": "\u200b", "outcome": "succeeded",
              "inputRef": "artifact:x", "completedAt": "0001-01-01T00:00:00+23:59"}  # fmt: skip
    with pytest.raises(ValidationError):
        RunCompleted.model_validate(stored)
    run = ContractAsJSON(RunCompleted).decode(stored)
    assert (run.agent_id, run.input_ref) == ("\u200b", "artifact:x")
    naive = ContractAsJSON(RunCompleted).decode({**stored, "completedAt": "2026-11-30T10:00:00"})
    assert naive.completed_at.tzinfo is None


def test_a_drift_the_rules_cannot_sum_is_refused() -> None:
    """Three of these made the proposal generator's mean overflow (SPEC C30)."""
    drift = {"driftId": "d", "targetAssetId": "a", "metric": "m", "baseline": 1.7e308,
             "observed": -1.7e308, "detectedAt": "2026-11-30T10:00:00Z"}  # fmt: skip
    with pytest.raises(ValidationError) as error:
        DriftDetected.model_validate(drift)
    assert {e["loc"][0] for e in error.value.errors()} == {"baseline", "observed"}
