"""Where a report goes: the technical classifier, the hand-over table and the addressee.

SPEC §3.1 (LooksTechnical), §3.2 (ShouldHandOver), §3.3 (addressees), W19–W35. The kinds and
categories themselves are public language (``contracts.report_kinds``).
Pure: no I/O, no clock. The word list, the handling of unknown categories and the kind table
are SPEC's *proposed* decisions, marked as such below and pinned in tests/unit/test_routing.py.
"""

import re
from collections.abc import Sequence

from contracts.report_kinds import Addressee, Category, Kind, parse_category, parse_kind

# SPEC §3.1, proposed. Bump the version whenever the list changes: what counted as technical
# yesterday must stay explainable.
TECHNICAL_WORDS_VERSION = 1
TECHNICAL_WORDS: tuple[str, ...] = (
    "error",
    "exception",
    "bug",
    "broken",
    "crash",
    "timeout",
    "timed out",
    "fails",
    "failed",
    "not working",
    "doesn't work",
    "does nothing",
    "404",
    "500",
    "link",
    "button",
    "card",
    "stack trace",
    "wrong",
    "doesn't know",
    "can't find",
    "not found",
)


def _word_pattern(word: str) -> str:
    """Whole words, so "link" is not found in "unlinked" nor "500" in "1500"; a word may carry an
    inflection (links, crashed, errors); spaces match any whitespace; an apostrophe may be
    typographic or missing (doesn’t, doesnt)."""
    body = r"\s+".join(re.escape(part) for part in word.split()).replace("'", "['’]?")
    inflection = "" if word.isdigit() else "(?:s|es|ed|ing)?"
    return rf"(?<!\w){body}{inflection}(?!\w)"


_TECHNICAL = re.compile("|".join(map(_word_pattern, TECHNICAL_WORDS)), re.IGNORECASE)


def looks_technical(text: str | None) -> bool:
    """Does the text read like a defect report (SPEC §3.1, W28)? Case-insensitive."""
    return text is not None and _TECHNICAL.search(text) is not None


def should_hand_over(category: str | None, message: str | None) -> bool:
    """Is a submitted report handed over to engineering triage (SPEC §3.2, W21–W26)?

    bug and idea always, praise never, answer never however technical it reads (W21), question
    when it looks technical. An unknown or missing category is treated like question (proposed:
    it matches the legacy /feedback behaviour).
    """
    match parse_category(category):
        case Category.bug | Category.idea:
            return True
        case Category.praise | Category.answer:
            return False
        case _:
            return looks_technical(message)


def is_agent_owner_kind(kind: str | None) -> bool:
    """The kinds whose addressee is the agent's owner: not-found and fabricated (W35)."""
    known = parse_kind(kind)
    return known is not None and known.addressee is Addressee.agent_owner


# How a composed Addressee names an agent's registered maintainers (decisions D133): as seed
# 000's own example does ("the course's maintainers"), by their role, never their ids.
REGISTERED_MAINTAINERS = "its registered maintainers"


def addressee_text(kind: str | None, agent_path: str | None, maintainers: Sequence[str]) -> str:
    """The ``Addressee:`` value (W13, W34): for agent-owner kinds the role, then the agent path and
    its maintainers, e.g. ``agent owner (AgenticOffice/Agent/OfficeCoach — Ana, Ben)``; for the
    others the role alone. An unknown kind goes to the Inbox reviewer, like ``other``."""
    role = (parse_kind(kind) or Kind.other).addressee
    if role is not Addressee.agent_owner:
        return role.value
    named = ", ".join(name for name in maintainers if name)
    details = " — ".join(part for part in (agent_path, named) if part)
    return f"{role.value} ({details})" if details else role.value
