"""Routing rules of reports (SPEC §3.1–3.3, W19–W35): technical words, hand-over, kinds."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contracts.report_kinds import Addressee, Category, Kind, parse_kind
from services.reports.routing import (
    TECHNICAL_WORDS,
    TECHNICAL_WORDS_VERSION,
    addressee_text,
    is_agent_owner_kind,
    looks_technical,
    should_hand_over,
)

PROPERTIES = settings(max_examples=200, deadline=None)

# Seed 000's example of an account that is not a defect but reads as one.
SEED_SENTENCE = "The coach said it doesn't know my hourly rate. It is in the Firmenprofil."


# ---- LooksTechnical (§3.1, proposed) ---------------------------------------------------------


def test_the_technical_words_are_the_proposed_list_at_version_1() -> None:
    assert TECHNICAL_WORDS_VERSION == 1
    proposed = (
        *("error", "exception", "bug", "broken", "crash", "timeout", "timed out", "fails"),
        *("failed", "not working", "doesn't work", "does nothing", "404", "500", "link"),
        *("button", "card", "stack trace", "wrong", "doesn't know", "can't find", "not found"),
    )
    assert proposed == TECHNICAL_WORDS


def test_looks_technical_is_true_for_the_seeds_example_sentence() -> None:
    """W28: which is why such an account must not go through /feedback."""
    assert looks_technical(SEED_SENTENCE)


@pytest.mark.parametrize("text", ["The coach doesn't know my rate", "That answer is WRONG."])
def test_doesnt_know_and_wrong_are_technical(text: str) -> None:
    """W28."""
    assert looks_technical(text)


@pytest.mark.parametrize("word", TECHNICAL_WORDS)
def test_every_technical_word_matches_in_any_case(word: str) -> None:
    assert looks_technical(f"Look: {word.upper()}!")
    assert looks_technical(f"look: {word}.")


@pytest.mark.parametrize(
    "text",
    [
        "The links are dead",
        "it crashed twice",
        "Two errors and a timeouts page",
        "The coach doesn’t know",  # typographic apostrophe
        "it cant find the file",  # apostrophe left out
        "timed\nout",
    ],
)
def test_inflections_and_apostrophe_variants_still_match(text: str) -> None:
    """Proposed: a word may take -s/-es/-ed/-ing; apostrophes may be typographic or missing."""
    assert looks_technical(text)


@pytest.mark.parametrize(
    "text",
    ["The unlinked notes", "let me debug this", "It costs CHF 1500", "a cardinal rule", ""],
)
def test_technical_words_match_whole_words_only(text: str) -> None:
    """Proposed: "link" is not found inside "unlinked", nor "500" inside "1500"."""
    assert not looks_technical(text)


def test_nothing_and_kind_words_are_not_technical() -> None:
    assert not looks_technical(None)
    assert not looks_technical("Thanks, the coach explained the rates very well.")


# ---- ShouldHandOver (§3.2) -------------------------------------------------------------------

TECHNICAL = "The export button does nothing"
PLAIN = "Could the coach also explain VAT?"


@pytest.mark.parametrize(
    ("category", "message", "handed_over"),
    [
        ("bug", PLAIN, True),  # W22
        ("bug", TECHNICAL, True),
        ("idea", PLAIN, True),  # W23
        ("idea", TECHNICAL, True),
        ("praise", PLAIN, False),  # W24
        ("praise", TECHNICAL, False),
        ("question", PLAIN, False),  # W25
        ("question", TECHNICAL, True),
        ("answer", PLAIN, False),  # W21
        ("answer", TECHNICAL, False),
    ],
)
def test_hand_over_bug_and_idea_always_praise_never_question_when_technical(
    category: str, message: str, handed_over: bool
) -> None:
    assert should_hand_over(category, message) is handed_over


@PROPERTIES
@given(st.text())
def test_an_answer_is_never_handed_over_however_technical_it_reads(message: str) -> None:
    """W21."""
    assert not should_hand_over("answer", message)
    assert not should_hand_over("answer", f"{message} error 404 wrong crash")


@pytest.mark.parametrize("category", [None, "", "complaint", "bugs"])
def test_an_unknown_or_missing_category_is_treated_like_a_question(category: str | None) -> None:
    """§3.2, proposed: as the legacy /feedback did, hand over only what looks technical."""
    assert should_hand_over(category, TECHNICAL)
    assert not should_hand_over(category, PLAIN)
    assert not should_hand_over(category, None)


def test_a_category_is_read_in_any_case_and_with_whitespace() -> None:
    assert should_hand_over(" BUG ", PLAIN)
    assert not should_hand_over("Answer", TECHNICAL)


# ---- Kinds and addressees (§3.3, proposed) ---------------------------------------------------


def test_the_kinds_are_the_proposed_closed_set() -> None:
    assert [kind.value for kind in Kind] == [
        "not-found",
        "retrieval",
        "no-access",
        "fabricated",
        "outdated",
        "other",
    ]


def test_retrieval_is_filed_as_a_bug_and_handed_over() -> None:
    """W19, W26, W31: retrieval alone routes itself."""
    assert Kind.retrieval.category is Category.bug
    assert should_hand_over(Kind.retrieval.category, "the coach gave a poor answer")


@pytest.mark.parametrize("kind", [kind for kind in Kind if kind is not Kind.retrieval])
def test_every_other_kind_is_filed_as_an_answer_and_stays_in_the_inbox(kind: Kind) -> None:
    """W20, W30."""
    assert kind.category is Category.answer
    assert not should_hand_over(kind.category, SEED_SENTENCE)


@pytest.mark.parametrize(
    ("kind", "addressee"),
    [
        (Kind.not_found, Addressee.agent_owner),  # W34
        (Kind.retrieval, Addressee.engineering_triage),
        (Kind.no_access, Addressee.node_owner),
        (Kind.fabricated, Addressee.agent_owner),
        (Kind.outdated, Addressee.content_owner),
        (Kind.other, Addressee.inbox_reviewer),
    ],
)
def test_each_kind_has_the_addressee_of_the_proposed_table(
    kind: Kind, addressee: Addressee
) -> None:
    assert kind.addressee is addressee


def test_the_agent_owner_kinds_are_not_found_and_fabricated() -> None:
    """W35: the kinds that will raise a notification on the agent."""
    assert [kind for kind in Kind if is_agent_owner_kind(kind)] == [Kind.not_found, Kind.fabricated]
    assert is_agent_owner_kind(" Fabricated ")
    assert not is_agent_owner_kind("made-up")
    assert not is_agent_owner_kind(None)


def test_the_addressee_of_an_agent_owner_kind_names_the_agent_and_its_maintainers() -> None:
    """W13, W34: written as in seed 000's example block."""
    text = addressee_text(
        "not-found", "AgenticOffice/Agent/OfficeCoach", ["the course's maintainers"]
    )
    assert text == "agent owner (AgenticOffice/Agent/OfficeCoach — the course's maintainers)"
    assert addressee_text(Kind.fabricated, "A/B", ["ana", "ben"]) == "agent owner (A/B — ana, ben)"


@pytest.mark.parametrize(
    ("agent_path", "maintainers", "text"),
    [
        ("A/B", [], "agent owner (A/B)"),
        (None, ["ana"], "agent owner (ana)"),
        (None, [], "agent owner"),
        ("", ["", "ana"], "agent owner (ana)"),
    ],
)
def test_the_agent_owner_addressee_leaves_out_what_is_unknown(
    agent_path: str | None, maintainers: list[str], text: str
) -> None:
    assert addressee_text("not-found", agent_path, maintainers) == text


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("retrieval", "engineering triage"),
        ("no-access", "node owner"),
        ("outdated", "content owner"),
        ("other", "Inbox reviewer"),
        ("made-up", "Inbox reviewer"),  # proposed: an unknown kind is treated like other
        (None, "Inbox reviewer"),
    ],
)
def test_the_addressee_of_other_kinds_is_the_role_alone(kind: str | None, text: str) -> None:
    assert addressee_text(kind, "A/B", ["ana"]) == text


@pytest.mark.parametrize(
    ("text", "kind"),
    [("not-found", Kind.not_found), (" NO-ACCESS ", Kind.no_access), ("nope", None), (None, None)],
)
def test_a_kind_is_read_in_any_case_and_with_whitespace(
    text: str | None, kind: Kind | None
) -> None:
    assert parse_kind(text) is kind
