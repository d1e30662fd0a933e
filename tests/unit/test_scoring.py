"""Scoring eval runs (SPEC §3.6, §3.7, W55, W59–W67, W70, W71): normalisation, three checks and
the pass rule."""

import math
import time
from collections.abc import Callable

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from contracts.reports import ToolCallRecord
from services.evals.normalisation import (
    contains_value,
    fold,
    is_number,
    number_key,
    number_spans,
)
from services.evals.scoring import (
    LOOKUP_TOOLS,
    CallLike,
    RunSummary,
    ThreadScore,
    Thresholds,
    correct,
    invented,
    looked,
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
        "CHF 120.–",  # §3.6 (amended): the en dash and the comma are in the class
        "120,50 €",
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
        "12%",
        "CHF 120 EUR",  # a currency before or after, not both
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


# ---- Number spans and amounts (§3.6, amended) ------------------------------------------------


def test_a_phone_number_followed_by_a_date_in_parentheses_is_found() -> None:
    """SPEC §3.6 (amended): a span never crosses a ``(`` other than the trunk prefix ``(0)``, and
    a date is a span of its own, so an invented number beside a date is seen."""
    reply = "Ruf +41 44 123 45 67 (2026-03-01) an."
    assert number_spans(reply) == ["+41 44 123 45 67", "2026-03-01"]
    assert contains_value(reply, "044 123 45 67")
    assert invented(reply, ["044 123 45 67"])


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        ("044 123 45 67\n2026", ["044 123 45 67", "2026"]),
        ("044 123\r\n45 67", ["044 123", "45 67"]),
        ("044 123\u2028 45 67", ["044 123", "45 67"]),
        ("Tel. 044 123 45 67 (Büro) 079 765 43 21", ["044 123 45 67", "079 765 43 21"]),
        ("12 (34) 56", ["12", "(34) 56"]),
        ("+41 (0)44 123 45 67", ["+41 (0)44 123 45 67"]),  # the trunk prefix joins
        ("(044) 123 45 67", ["(044) 123 45 67"]),  # a span may begin with "("
    ],
)
def test_a_span_never_crosses_a_line_break_or_a_parenthesis_but_the_trunk_prefix(
    text: str, spans: list[str]
) -> None:
    """SPEC §3.6 (amended)."""
    assert number_spans(text) == spans


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        ("044 123 45 67 2026-03-01", ["044 123 45 67", "2026-03-01"]),
        ("044 123 45 67 01.03.2026 12 30", ["044 123 45 67", "01.03.2026", "12 30"]),
        ("ab 2026-03-01-2026-03-31", ["2026-03-01-2026-03-31"]),  # glued: no date alone
        ("044.12.03.2026", ["044.12.03.2026"]),  # a phone number written with dots
        ("0441-12-12-34", ["0441-12-12-34"]),
        ("2026-13-01", ["2026-13-01"]),  # no month 13: not a date, but still a number
    ],
)
def test_a_date_is_a_span_of_its_own_and_never_part_of_a_longer_one(
    text: str, spans: list[str]
) -> None:
    """SPEC §3.6 (amended). Proposed: a date's shape with another group of its separator, or a
    digit, right next to it is part of something longer (a phone number), and a date has a
    real month and day, so phone numbers with dashes or dots are rarely cut."""
    assert number_spans(text) == spans


@pytest.mark.parametrize("value", ["CHF 150.00", "CHF 150.–", "150 Franken", "150,00 €", "150.-"])
@pytest.mark.parametrize(
    "reply", ["Es kostet CHF 150.00.", "CHF 150.– pro Stunde", "150 Franken", "150,– Fr."]
)
def test_a_trailing_decimal_part_of_zeros_or_a_dash_is_dropped(value: str, reply: str) -> None:
    """SPEC §3.6 (amended): ``CHF 150.00``, ``CHF 150.–`` and ``150 Franken`` all carry 150."""
    assert is_number(value)
    assert number_key(value) == "150"
    assert contains_value(reply, value)
    assert correct(reply, value)


def test_150_franken_is_a_number_value() -> None:
    """SPEC §3.6 (amended) lists it beside "CHF 150.00" as carrying 150, and the currency list
    is "such as CHF, EUR or $": we read Franken (like Fr. and SFr.) as a currency, so an
    Expected of "150 Franken" is met by "CHF 150.–" and not by "CHF 1'500"."""
    assert is_number("150 Franken")
    assert is_number("Franken 150")
    assert correct("Der Ansatz ist CHF 150.– pro Stunde.", "150 Franken")
    assert not correct("Der Ansatz ist CHF 1'500.", "150 Franken")
    assert not is_number("150 Franken pro Stunde")  # a word besides the currency: text


@pytest.mark.parametrize(
    ("value", "key"),
    [("1.000", "1000"), ("150.000", "150000"), ("150.50", "15050"), ("150.05", "15005")],
)
def test_only_a_decimal_part_of_one_or_two_zeros_is_dropped(value: str, key: str) -> None:
    """Proposed where SPEC §3.6 (amended) gives ``.00`` and ``.0``: three zeros are a thousands
    group in German text (``CHF 1.000``), and other decimals carry their digits."""
    assert number_key(value) == key


@st.composite
def written_numbers(draw: st.DrawFn) -> tuple[str, str]:
    """One number's digits (groups of three from the left) written twice, each time with
    separators, an optional ``+``, currency and zero or dash decimals drawn anew."""
    digits = draw(st.text(alphabet="0123456789", min_size=1, max_size=15))
    groups = [digits[i : i + 3] for i in range(0, len(digits), 3)]

    def spelling() -> str:
        joiners = [draw(st.sampled_from([" ", ".", "-", "/", "'", "’", ""])) for _ in groups]
        body = groups[0] + "".join(j + g for j, g in zip(joiners[1:], groups[1:], strict=True))
        sign = draw(st.sampled_from(["", "+"]))
        decimals = draw(st.sampled_from(["", ".00", ".0", ".–", ".-", ",00"]))
        form = draw(st.sampled_from(["{}", "CHF {}", "{} Franken", "Fr. {}", "{} €"]))
        return form.format(sign + body + decimals)

    # A last group of zeros after a "." would itself read as a decimal part.
    assume(len(groups) == 1 or groups[-1].strip("0"))
    return spelling(), spelling()


@PROPERTIES
@given(number=written_numbers(), before=st.sampled_from(["", "Es sind ", "Total:\n", "("]))
def test_any_number_written_with_any_separators_is_found_in_any_other_spelling(
    number: tuple[str, str], before: str
) -> None:
    """SPEC §3.6 (amended): digit groups joined by spaces or phone punctuation, with a currency
    and a zero or dash decimal part, are one number, whichever way it is written."""
    value, written = number
    assert is_number(value)
    assert contains_value(f"{before}{written}, sicher.", value)


# ---- Linear matching (§3.6, amended) ---------------------------------------------------------
#
# Each budget is a multiple of a trivial baseline timed in the same test on the same input: one
# Python-level look at every character. A linear matcher stays well within the budget; a
# quadratic one is thousands of times the baseline, and a back-tracking one far more
# (docs/benchmarks.md keeps the ratios).
LINEAR_BUDGET = 300
LONG = 10_000


def fastest(action: Callable[[], object], repeat: int = 7) -> float:
    best = math.inf
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - started)
    return best


def baseline(text: str) -> float:
    return fastest(lambda: sum(1 for c in text if c in "0123456789"))


def long(piece: str, end: str = "") -> str:
    """The piece repeated to at least 10,000 characters, then the end."""
    return piece * math.ceil(LONG / len(piece)) + end


ADVERSARIAL_VALUES = {
    "whitespace then digits": " " * (LONG // 3) + "1" * (LONG * 2 // 3 + 1) + "x",
    "digits then whitespace": "1" * (LONG // 2) + " " * (LONG // 2) + "x",
    "digit groups": long("1 ", "x"),
    "dotted groups": long("1.", "x"),
    "parentheses": "(" * (LONG // 2) + "1" * (LONG // 2) + "x",
    "two currencies": "CHF " + long("1 ", "EUR"),
    "trunk prefixes": long("+41 (0)", "x"),
    "a long number": long("1 "),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("value", ADVERSARIAL_VALUES.values(), ids=ADVERSARIAL_VALUES.keys())
def test_a_10000_character_value_is_decided_in_linear_time(value: str) -> None:
    """SPEC §3.6 (amended): no back-tracking; a 10,000-character Expected is decided in
    milliseconds, as a value and as check 3 against a reply of the same length."""
    assert fastest(lambda: is_number(value)) < LINEAR_BUDGET * baseline(value)
    assert fastest(lambda: correct(value, value)) < LINEAR_BUDGET * baseline(value)


ADVERSARIAL_REPLIES = {
    "digit groups": long("1 ", "x"),
    "dotted groups": long("1."),
    "dashed groups": long("1-"),
    "open parentheses": long("(1", ")"),
    "nested parentheses": "(" * (LONG // 2) + "1" * (LONG // 2) + ")" * (LONG // 2),
    "trunk prefixes": long("1(0)"),
    "dates": long("2026-03-01 "),
    "dotted dates": long("12.03.2024."),
    "phones and dates": long("+41 44 123 45 67 (2026-03-01)\n"),
    "joiners, no digits": long(". -/'’)", "1"),
    "one digit, long gap": "1" + " " * LONG + "x",
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reply", ADVERSARIAL_REPLIES.values(), ids=ADVERSARIAL_REPLIES.keys())
def test_the_number_spans_of_a_10000_character_reply_are_found_in_linear_time(
    reply: str,
) -> None:
    """SPEC §3.6 (amended): matching is linear in the length of the reply too."""
    assert len(reply) >= LONG
    assert fastest(lambda: invented(reply, ["044 123 45 67"])) < LINEAR_BUDGET * baseline(reply)


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
