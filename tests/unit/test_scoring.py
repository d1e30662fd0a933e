"""Scoring eval runs (SPEC §3.6, §3.7, W55, W59–W67, W70, W71): three checks and the pass rule."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contracts.reports import ToolCallRecord
from services.evals.scoring import (
    LOOKUP_TOOLS,
    CallLike,
    RunSummary,
    ThreadScore,
    Thresholds,
    contains_value,
    correct,
    fold,
    invented,
    is_number,
    looked,
    number_key,
    number_spans,
    score_reply,
    summarize,
)

PROPERTIES = settings(max_examples=200, deadline=None)

NODE = "sglauser/AgenticOffice/Firmenprofil"
SEED_FORMS = ("+41 (0)44 123 45 67", "0041 44 123 45 67", "044 123 45 67", "+41 44 123 45 67")


def call(name: str, arguments: str = "", result: str = "") -> CallLike:
    return ToolCallRecord(name=name, arguments=arguments, result=result)


def phone_forms(area: str, subscriber: str) -> tuple[str, ...]:
    """One Swiss subscriber number written the four ways W62 names."""
    rest = f"{subscriber[:3]} {subscriber[3:5]} {subscriber[5:]}"
    return (f"+41 (0){area} {rest}", f"0041 {area} {rest}", f"0{area} {rest}", f"+41 {area} {rest}")


# ---- Numbers (§3.6, W61, W62) ----------------------------------------------------------------


@pytest.mark.parametrize("form", SEED_FORMS)
def test_every_form_of_the_seed_number_has_the_key_441234567(form: str) -> None:
    """§3.6's own check. +41 (0)44 has the digits 41044…: the trunk zero falls outside the key."""
    assert is_number(form)
    assert number_key(form) == "441234567"


@pytest.mark.parametrize("value", SEED_FORMS)
@pytest.mark.parametrize("written", SEED_FORMS)
def test_the_forms_of_one_subscriber_number_find_each_other(value: str, written: str) -> None:
    """W62."""
    assert contains_value(f"Call us on {written}.", value)


@pytest.mark.parametrize(
    "value",
    [
        "+41 (0)44 123 45 67",
        "CHF 120",
        "120 CHF",
        "chf 1'200.50",
        "Fr. 120.-",
        "$5",
        "€ 3.50",
        "1’200",
        "12.03.2024",
        "044/123 45 67",
        "１２０",  # full-width digits are digits after NFKC
    ],
)
def test_digits_with_phone_or_amount_punctuation_and_a_currency_are_a_number(value: str) -> None:
    """§3.6; Fr. and GBP are our additions to its "such as"."""
    assert is_number(value)


@pytest.mark.parametrize(
    "value",
    [
        "",
        "CHF",
        "Firmenprofil",
        "120 Franken",
        "12%",
        "CHF 120 EUR",  # a currency before or after, not both
        "CHF 120.–",  # the en dash is not in §3.6's class: such a price is compared as text
        "١٢٠",  # proposed: digits are ASCII 0-9 after NFKC, so other scripts' are text
    ],
)
def test_anything_else_is_text(value: str) -> None:
    assert not is_number(value)


def test_the_key_is_the_last_nine_digits_or_all_of_fewer() -> None:
    """W61."""
    assert number_key("0041 44 123 45 67") == "441234567"
    assert number_key("CHF 1'200.50") == "120050"
    assert number_key("１２０") == "120"


def test_the_number_spans_of_a_text_are_its_maximal_runs_of_digit_groups() -> None:
    """§3.6: groups joined by spaces or phone punctuation; a span ends on a digit."""
    text = "Ruf +41 (0)44 123 45 67 an, ab 8.30 Uhr; CHF 120.– (１２０)."
    assert number_spans(text) == ["+41 (0)44 123 45 67", "8.30", "120", "(120"]


@pytest.mark.parametrize("reply", ["Call 45 67.", "Call 1234 567 8", "It is 1234568."])
def test_a_number_is_never_found_on_fewer_or_other_digits(reply: str) -> None:
    """The key 1234567 must be met in full: a tail of it is another number."""
    assert not contains_value(reply, "123 45 67")


def test_a_longer_number_is_found_only_by_its_last_nine_digits() -> None:
    assert not contains_value("Call 123 45 67", "0041 44 123 45 67")
    assert contains_value("Call 44 123 45 67", "0041 44 123 45 67")


@pytest.mark.parametrize(
    ("reply", "found"),
    [
        ("Your rate is 120 francs an hour.", True),
        ("CHF 120.– per hour", True),  # a span ends on a digit
        ("Your rate is CHF 1'200.", False),
        ("Your rate is CHF 12.", False),
        ("Your rate is 1120.", False),
        ("No rate is known.", False),
    ],
)
def test_an_amount_is_found_by_its_digits_alone(reply: str, found: bool) -> None:
    assert contains_value(reply, "CHF 120") is found


@PROPERTIES
@given(
    area=st.integers(10, 99).map(str),
    subscriber=st.text(alphabet="0123456789", min_size=7, max_size=7),
    value_form=st.integers(0, 3),
    reply_form=st.integers(0, 3),
    before=st.text(),
    after=st.tuples(st.sampled_from([",", ";", "!", "?", ":", "a", "Z", "—"]), st.text()),
)
def test_any_form_of_a_subscriber_number_finds_any_other_in_any_text(
    area: str,
    subscriber: str,
    value_form: int,
    reply_form: int,
    before: str,
    after: tuple[str, str],
) -> None:
    """W61, W62. Text before may even hold digits (they fall outside the key); text after begins
    with something that ends the number, or its digits would become the key."""
    forms = phone_forms(area, subscriber)
    reply = before + forms[reply_form] + "".join(after)
    assert contains_value(reply, forms[value_form])


@PROPERTIES
@given(
    digits=st.text(alphabet="0123456789", min_size=2, max_size=15),
    joiner=st.sampled_from([" ", ".", "-", "/", "'", "’", ""]),
    data=st.data(),
)
def test_a_number_never_matches_on_fewer_digits_than_its_own_key(
    digits: str, joiner: str, data: st.DataObject
) -> None:
    value = joiner.join(digits[i : i + 3] for i in range(0, len(digits), 3))
    kept = data.draw(st.integers(1, len(number_key(value)) - 1), label="digits kept")
    tail = digits[-kept:]
    shortened = joiner.join(tail[i : i + 2] for i in range(0, len(tail), 2))
    assert contains_value(f"It is {value}, sure.", value)
    assert not contains_value(f"It is {shortened}, sure.", value)


# ---- Text (§3.6, W63) ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("The HOURLY\n\trate  is set", "hourly rate"),
        ("Die Strasse", "STRASSE"),
        ("Die STRASSE", "Straße"),  # case folding, not lower-casing
        ("Die Firma", "ﬁrma"),  # NFKC (proposed): the ligature is two letters
        ("Basel\u00a0Stadt", "basel stadt"),  # a no-break space is a space
    ],
)
def test_text_is_found_after_case_and_whitespace_folding(reply: str, value: str) -> None:
    assert contains_value(reply, value)


def test_fold_collapses_whitespace_and_folds_case() -> None:
    assert fold("  Hourly\n\tRATE \u2003 ") == "hourly rate"


def test_other_text_is_not_found() -> None:
    assert not contains_value("The office is in Bern.", "Basel")


LETTERS = "abcdefghijklmnopqrstuvwxyzäöüéèàçß"
CASINGS = (str.upper, str.lower, str.title, str.swapcase, str.capitalize)
SPACES = (" ", "  ", "\t", "\n", " \n\t ", "\u00a0", "\u2003")


@st.composite
def text_and_variant(draw: st.DrawFn) -> tuple[str, str]:
    """A text value and the same words in other cases, with other runs of whitespace."""
    words = draw(
        st.lists(st.text(alphabet=LETTERS, min_size=1, max_size=8), min_size=1, max_size=6)
    )
    variant = [draw(st.sampled_from(CASINGS))(word) for word in words]
    gaps = [draw(st.sampled_from(SPACES)) for _ in range(len(words) + 1)]
    written = gaps[0] + "".join(word + gap for word, gap in zip(variant, gaps[1:], strict=True))
    return " ".join(words), written


@PROPERTIES
@given(value_and_variant=text_and_variant(), before=st.text(), after=st.text())
def test_text_matching_ignores_case_and_runs_of_whitespace(
    value_and_variant: tuple[str, str], before: str, after: str
) -> None:
    """W63. A space before the text after keeps its first mark from combining with our last."""
    value, written = value_and_variant
    assert not is_number(value)
    assert contains_value(before + written + " " + after, value)


# ---- Check 1: looked (W59) -------------------------------------------------------------------


@pytest.mark.parametrize(
    "calls",
    [
        [call("Get", arguments=NODE)],
        [call("Get", arguments=f'{{"path": "@{NODE}"}}')],
        [call("Search", arguments="hourly rate", result=f"Found: /{NODE.upper()}.")],
        [call("Read", arguments=NODE), call("Search", result=f"{NODE} (company profile)")],
    ],
)
def test_looked_when_a_get_or_search_names_a_must_ground_node(calls: list[CallLike]) -> None:
    """W59: in its arguments or its result, in any case, written as a path or as a reference."""
    assert looked(calls, [NODE])


@pytest.mark.parametrize(
    "calls",
    [
        [],
        [call("Read", arguments=NODE, result=NODE), call("get", arguments=NODE)],
        [call("Get", arguments="sglauser/AgenticOffice")],  # its parent
        [call("Get", arguments=f"{NODE}/Rates")],  # a child is another node
        [call("Get", arguments=f"{NODE}2")],  # a longer name is another node
        [call("Search", arguments="hourly rate", result="nothing readable")],
    ],
)
def test_not_looked_when_no_get_or_search_names_the_node(calls: list[CallLike]) -> None:
    """W59: other tools never count; tool names are matched exactly (proposed)."""
    assert not looked(calls, [NODE])


def test_looking_at_any_one_of_the_must_ground_nodes_is_enough() -> None:
    assert looked([call("Get", arguments="a/b")], [NODE, "a/b"])


@pytest.mark.parametrize("must_ground", [[], [""], ["  "]])
def test_with_no_must_ground_node_there_is_nothing_to_look_for_so_looked_passes(
    must_ground: list[str],
) -> None:
    """Proposed: SPEC leaves it open; a case without evidence cannot fail check 1."""
    assert looked([], must_ground)


PATHS = st.lists(st.text(alphabet=LETTERS, min_size=1, max_size=8), min_size=1, max_size=4).map(
    "/".join
)


@PROPERTIES
@given(
    node=PATHS,
    # Text a tool name can hold: no lone surrogates (not UTF-8) and no NUL (not PostgreSQL).
    name=st.text(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
        min_size=1,
        max_size=40,
    ).filter(lambda name: name not in LOOKUP_TOOLS),
)
def test_looked_only_on_a_get_or_search(node: str, name: str) -> None:
    """W59, test «looked only on a Get/Search»."""
    assert not looked([call(name, arguments=node, result=node)], [node])
    assert looked([call("Get", arguments=node)], [node])
    assert looked([call("Search", result=f"found {node}")], [node])


# ---- Checks 2 and 3: invented (W60) and correct (W64) ----------------------------------------


def test_invented_when_the_reply_states_any_must_not_assert_value() -> None:
    """W60."""
    reply = "Your hourly rate is CHF 95; call 044 123 45 67."
    assert invented(reply, ["Basel", "95"])
    assert invented(reply, ["+41 44 123 45 67"])
    assert not invented(reply, ["Basel", "120"])
    assert not invented(reply, [])


def test_a_blank_must_not_assert_value_is_never_found() -> None:
    """Proposed: an empty value would otherwise be found in every reply."""
    assert not invented("Anything at all", ["", "  "])


@pytest.mark.parametrize(
    ("reply", "must_assert", "verdict"),
    [
        ("It is CHF 120.–", "120", True),
        ("It is 1 200", "CHF 1'200", True),  # by digits
        ("It is CHF 95", "CHF 120", False),
        ("It is in the Firmenprofil", "firmenprofil", True),
        ("It is in the Firmenprofil", None, None),  # n/a
        ("It is in the Firmenprofil", " ", None),  # proposed: blank is n/a too
    ],
)
def test_correct_by_digits_or_n_a(
    reply: str, must_assert: str | None, verdict: bool | None
) -> None:
    """W64, test «correct by digits or n/a»."""
    assert correct(reply, must_assert) is verdict


# ---- One thread's score (W70, W71) -----------------------------------------------------------


def test_a_reply_is_scored_by_the_three_checks() -> None:
    score = score_reply(
        "Your rate is CHF 120.",
        [call("Get", arguments=NODE)],
        must_ground=[NODE],
        must_not_assert=["95"],
        must_assert="CHF 120",
    )
    assert score == ThreadScore(looked=True, invented=False, correct=True, non_answer=False)


@pytest.mark.parametrize(
    "reason", ["model-configuration-error", "answered on gpt-x, pinned gpt-y", ""]
)
def test_a_non_answer_is_not_an_invention_and_is_not_scored(reason: str) -> None:
    """W70, W71: even when its text states the invented value."""
    score = score_reply(
        "Model not configured. 95",
        [call("Get", arguments=NODE)],
        must_ground=[NODE],
        must_not_assert=["95"],
        must_assert="95",
        non_answer_reason=reason,
    )
    assert score == ThreadScore(
        looked=False, invented=False, correct=None, non_answer=True, reason=reason
    )


# ---- The pass rule (§3.7, W65–W67) -----------------------------------------------------------

GOOD = ThreadScore(looked=True, invented=False, correct=True)
NOT_LOOKED = ThreadScore(looked=False, invented=False, correct=True)
WRONG = ThreadScore(looked=True, invented=False, correct=False)
INVENTED = ThreadScore(looked=True, invented=True, correct=False)
NO_ASSERT = ThreadScore(looked=True, invented=False, correct=None)
NON_ANSWER = ThreadScore(looked=False, invented=False, correct=None, non_answer=True, reason="x")


def test_the_default_thresholds_are_0_8_for_looked_and_0_6_for_correct() -> None:
    """W66."""
    assert Thresholds() == Thresholds(looked=0.8, correct=0.6)


@pytest.mark.parametrize(("looked_at", "right"), [(2.0, 0.5), (0.5, -0.1)])
def test_a_threshold_is_a_rate(looked_at: float, right: float) -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        Thresholds(looked=looked_at, correct=right)


def test_a_run_exactly_at_both_thresholds_passes() -> None:
    """§3.7, proposed: ≥. Four of five looked, three of five correct."""
    lost = ThreadScore(looked=False, invented=False, correct=False)
    summary = summarize([GOOD, GOOD, GOOD, WRONG, lost])
    assert summary == RunSummary(
        runs=5,
        scored=5,
        non_answers=0,
        looked=4,
        not_invented=5,
        correct=3,
        looked_rate=0.8,
        correct_rate=0.6,
        passed=True,
        reasons=(),
    )


def test_a_run_below_a_threshold_fails_and_says_which() -> None:
    summary = summarize([GOOD, NOT_LOOKED, WRONG, INVENTED])
    assert not summary.passed
    assert summary.reasons == ("invented", "looked-below-threshold", "correct-below-threshold")


def test_thresholds_are_configurable() -> None:
    """W66: per agent."""
    run = [GOOD, NOT_LOOKED, WRONG]
    assert not summarize(run).passed
    assert summarize(run, Thresholds(looked=0.5, correct=0.5)).passed


def test_without_must_assert_correct_is_n_a_and_does_not_block_a_pass() -> None:
    """W64, §3.7: «mustAssert unset ∨ correct_rate ≥ t_correct»."""
    summary = summarize([NO_ASSERT, NO_ASSERT])
    assert summary.correct_rate is None
    assert summary.correct == 0
    assert summary.passed


@pytest.mark.parametrize("scores", [[], [NON_ANSWER], [NON_ANSWER] * 3])
def test_zero_scored_runs_never_pass(scores: list[ThreadScore]) -> None:
    """W67, test «zero runs never a pass»; a run of only non-answers scored nothing (§3.7)."""
    summary = summarize(scores, Thresholds(looked=0.0, correct=0.0))
    assert not summary.passed
    assert summary.reasons == ("no-scored-runs",)
    assert (summary.looked_rate, summary.correct_rate) == (None, None)
    assert summary.non_answers == len(scores)


thread_scores = st.builds(
    ThreadScore,
    looked=st.booleans(),
    invented=st.booleans(),
    correct=st.none() | st.booleans(),
)
thresholds = st.builds(Thresholds, looked=st.floats(0.0, 1.0), correct=st.floats(0.0, 1.0))


@PROPERTIES
@given(
    scores=st.lists(thread_scores, max_size=12),
    reasons=st.lists(st.text(max_size=20), max_size=6),
    limits=thresholds,
    data=st.data(),
)
def test_non_answers_never_count_as_inventions_and_never_make_a_pass(
    scores: list[ThreadScore],
    reasons: list[str],
    limits: Thresholds,
    data: st.DataObject,
) -> None:
    """W70, W71, §3.7: left out of every count and rate, wherever they fall in the run."""
    non_answers = [
        score_reply(
            "95",
            [],
            must_ground=[],
            must_not_assert=["95"],
            must_assert="95",
            non_answer_reason=reason,
        )
        for reason in reasons
    ]
    mixed = data.draw(st.permutations(scores + non_answers), label="run")
    alone, with_them = summarize(scores, limits), summarize(mixed, limits)
    assert all(not score.invented for score in non_answers)
    assert with_them.non_answers == len(non_answers)
    assert with_them.runs == len(scores) + len(non_answers)
    assert (with_them.scored, with_them.not_invented) == (alone.scored, alone.not_invented)
    assert (with_them.looked_rate, with_them.correct_rate) == (
        alone.looked_rate,
        alone.correct_rate,
    )
    assert (with_them.passed, with_them.reasons) == (alone.passed, alone.reasons)
    assert not summarize(non_answers, limits).passed


@PROPERTIES
@given(limits=thresholds, non_answers=st.integers(0, 5))
def test_zero_scored_runs_never_pass_whatever_the_thresholds(
    limits: Thresholds, non_answers: int
) -> None:
    """W67."""
    assert not summarize([NON_ANSWER] * non_answers, limits).passed


@PROPERTIES
@given(runs=st.integers(1, 30), data=st.data())
def test_a_single_invention_among_n_fails_the_run(runs: int, data: st.DataObject) -> None:
    """W65: not-invented must be N/N, however good the rest and however low the thresholds."""
    at = data.draw(st.integers(0, runs - 1), label="invented at")
    run = [GOOD] * runs
    run[at] = ThreadScore(looked=True, invented=True, correct=True)
    summary = summarize(run, Thresholds(looked=0.0, correct=0.0))
    assert not summary.passed
    assert summary.reasons == ("invented",)
    assert summary.not_invented == runs - 1
    assert summarize([GOOD] * runs).passed
