"""The operator's reloadable settings file (SPEC C46, C47; decisions D152): read again once it
changes, over the environment, only the settings read at each use."""

import os
from pathlib import Path

import pytest

from services.learning.settings import LearningSettings
from services.processes.reloadable import ReloadableEnviron, parse_reloadable

pytestmark = pytest.mark.unit


def test_only_the_settings_read_at_each_use_are_taken_and_the_rest_is_named() -> None:
    parsed = parse_reloadable(
        "# comment\n\nFEEDBACKLOOP_LEARNING_MIN_EVIDENCE_ITEMS = 5\n"
        "FEEDBACKLOOP_MEMORY_PROMOTION_URL=http://consent.example\n"
        "DATABASE_URL=postgresql://elsewhere\nnot a setting\n"
    )
    assert parsed.values == {
        "FEEDBACKLOOP_LEARNING_MIN_EVIDENCE_ITEMS": "5",
        "FEEDBACKLOOP_MEMORY_PROMOTION_URL": "http://consent.example",
    }
    assert len(parsed.ignored) == 2
    assert "DATABASE_URL: read at start only" in parsed.ignored[0]
    assert parsed.ignored[1].startswith("line 6")


def test_a_change_to_the_file_is_read_at_the_next_use_and_wins_over_the_environment(
    tmp_path: Path,
) -> None:
    file = tmp_path / "reloadable.env"
    base = {"FEEDBACKLOOP_LEARNING_MIN_EVIDENCE_ITEMS": "3", "OTHER": "x"}
    environ = ReloadableEnviron(base, file)
    assert LearningSettings.from_environ(environ).min_evidence_items == 3  # no file yet
    file.write_text("FEEDBACKLOOP_LEARNING_MIN_EVIDENCE_ITEMS=7\n")
    assert LearningSettings.from_environ(environ).min_evidence_items == 7
    file.write_text("FEEDBACKLOOP_LEARNING_PROPOSAL_PROFILE=model\n")  # same length or not
    os.utime(file, ns=(1, 1))  # a rewrite within the clock's grain is still seen (size, inode)
    settings = LearningSettings.from_environ(environ)
    assert (settings.min_evidence_items, settings.proposal_profile) == (3, "model")
    assert environ["OTHER"] == "x"
    file.unlink()
    assert LearningSettings.from_environ(environ).proposal_profile == "structured"


def test_without_a_file_it_is_the_environment() -> None:
    environ = ReloadableEnviron({"A": "1"}, None)
    assert dict(environ) == {"A": "1"}
    assert environ.get("B") is None
