"""docs/decisions.md declares each decision once: a second copy drifts from the code (the older
copy of D22–D27 said an unregistered agent was open to every AssetMaintainer, which D77 ended)."""

import re
from collections import Counter
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

DECISIONS = Path(__file__).resolve().parents[2] / "docs" / "decisions.md"

# A decision is declared where a line opens with its id: "- **D22 ..." or "## D51. ...".
DECLARATION = re.compile(r"^(?:- \*\*|#+ )(D\d+)\b", re.MULTILINE)


def test_every_decision_is_declared_once() -> None:
    declared = Counter(DECLARATION.findall(DECISIONS.read_text(encoding="utf-8")))
    assert declared, "no decision found: has the declaration format changed?"
    assert sorted(d for d, n in declared.items() if n > 1) == []


def test_the_kept_d23_is_the_one_the_code_keeps() -> None:
    # services/permissions/agent_register.require_maintainer refuses an agent not registered.
    text = DECISIONS.read_text(encoding="utf-8")
    assert "does not hold has no maintainer" in text
    assert "open to every AssetMaintainer" not in text
