"""The labelled block of a wrong-answer report (SPEC W04–W13, W36–W39, §3.4): compose and parse."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contracts.labelled_block import (
    LABELS,
    LabelledBlock,
    ModelLine,
    ToolCall,
    compose,
    parse,
    unquoted,
)
from contracts.report_kinds import Kind, parse_kind
from services.evals.scoring import correct

# The example block of seed 000, verbatim (three spaces before the Model parenthesis included).
SEED_BLOCK = """\
Kind: not-found
Thread: sglauser/_Thread/2026-09-18-1319
Message: sglauser/_Thread/2026-09-18-1319/a7f3
Agent: AgenticOffice/Agent/OfficeCoach
Model: claude-sonnet-4-5   (requested: same; harness: native)
Tools called: 1 — Get(AgenticOffice/01-Willkommen) → ok
Answer (excerpt): "Ich weiss leider nicht, welchen Stundenansatz du verrechnest…"
Expected: "Konzept-Ansatz CHF 150 steht im Firmenprofil"
Evidence: get sglauser/AgenticOffice/Firmenprofil → readable; no Search in toolCalls
Addressee: agent owner (AgenticOffice/Agent/OfficeCoach — the course's maintainers)"""

SEED_FIELDS = LabelledBlock(
    kind="not-found",
    thread="sglauser/_Thread/2026-09-18-1319",
    message="sglauser/_Thread/2026-09-18-1319/a7f3",
    agent="AgenticOffice/Agent/OfficeCoach",
    model=ModelLine(actual="claude-sonnet-4-5", requested=None, harness="native"),
    tools_called=(ToolCall("Get", "AgenticOffice/01-Willkommen", "ok"),),
    answer_excerpt="Ich weiss leider nicht, welchen Stundenansatz du verrechnest…",
    expected="Konzept-Ansatz CHF 150 steht im Firmenprofil",
    evidence="get sglauser/AgenticOffice/Firmenprofil → readable; no Search in toolCalls",
    addressee="agent owner (AgenticOffice/Agent/OfficeCoach — the course's maintainers)",
)


def test_the_seeds_example_block_parses_to_its_fields() -> None:
    assert parse(SEED_BLOCK) == SEED_FIELDS


def test_composing_the_seeds_fields_writes_the_seeds_block_with_single_spacing() -> None:
    """W05, W07, W09–W11: labels, separators, arrows and quotes as the seed writes them."""
    assert compose(SEED_FIELDS) == SEED_BLOCK.replace("4-5   (", "4-5 (")


def test_labels_are_emitted_in_the_order_spec_w05_gives() -> None:
    assert LABELS == (
        "Kind",
        "Thread",
        "Message",
        "Agent",
        "Model",
        "Tools called",
        "Answer (excerpt)",
        "Expected",
        "Evidence",
        "Addressee",
    )
    written = [line.split(": ", 1)[0] for line in compose(SEED_FIELDS).split("\n")]
    assert written == list(LABELS)


def test_fields_that_are_none_are_left_out() -> None:
    assert compose(LabelledBlock(kind="other", evidence="none")) == "Kind: other\nEvidence: none"


@pytest.mark.parametrize(
    ("model", "line"),
    [
        (ModelLine("m1", None, "native"), "m1 (requested: same; harness: native)"),  # W07
        (ModelLine("m1", "m2", "native"), "m1 (requested: m2; harness: native)"),  # W08
        (ModelLine("m1", "m2", None), "m1 (requested: m2)"),
        (ModelLine("m1", None, None), "m1"),  # proposed: nothing to say, no parenthesis
    ],
)
def test_the_model_line_names_requested_model_and_harness(model: ModelLine, line: str) -> None:
    text = compose(LabelledBlock(kind="other", model=model))
    assert text == f"Kind: other\nModel: {line}"
    assert parse(text) == LabelledBlock(kind="other", model=model)


@pytest.mark.parametrize(
    ("value", "model"),
    [
        ("gpt-4o(requested: claude-x; harness: native)", ModelLine("gpt-4o", "claude-x", "native")),
        ("gpt-4o (harness: native; REQUESTED: Same)", ModelLine("gpt-4o", None, "native")),
        ("gpt-4o (requested: gpt-4o)", ModelLine("gpt-4o", None, None)),  # equal means same
        ("gpt-4o (requested: b, harness: h", ModelLine("gpt-4o", "b", "h")),  # commas, no ")"
        ("gpt-4o — a fast one", ModelLine("gpt-4o", None, None)),
        ("(requested: b)", None),  # no model name: no model
    ],
)
def test_the_model_is_read_tolerantly(value: str, model: ModelLine | None) -> None:
    """§3.4: the model runs to the first whitespace or "("; requested and harness come after."""
    block = parse(f"Kind: other\nModel: {value}")
    assert block is not None
    assert block.model == model


def test_no_tools_called_is_written_as_zero_and_read_as_none_called() -> None:
    text = compose(LabelledBlock(kind="other", tools_called=()))
    assert text == "Kind: other\nTools called: 0"
    assert parse(text) == LabelledBlock(kind="other", tools_called=())


def test_tool_arguments_may_hold_commas_parentheses_arrows_and_line_breaks() -> None:
    calls = (
        ToolCall("Search", '{"q": "rate, hourly", "in": ["a (b)", "c → d"]}', "0 hits"),
        ToolCall("Get", "f(x), g(y) → z\nKind: not a label", "ok, cached"),
        ToolCall("mcp__docs.read", "", ""),
    )
    block = LabelledBlock(kind="other", tools_called=calls)
    assert parse(compose(block)) == block


@pytest.mark.parametrize(
    ("value", "calls"),
    [
        ("2 — Get(a) → ok; Search(b) → none", (("Get", "a", "ok"), ("Search", "b", "none"))),
        ("Get(a)->ok", (("Get", "a", "ok"),)),  # no count, ASCII arrow
        ("1 - Get(a), Search(b)", (("Get", "a", ""), ("Search", "b", ""))),  # no results
        ("2 — Get(a)b) → ok, X(y) → 1", (("Get", "a)b", "ok"), ("X", "y", "1"))),  # stray ")"
        ("1 — Get((a → ok", (("Get", "(a → ok", ""),)),  # unclosed: the rest are arguments
        ("3", ()),  # a count and nothing to read
        ("none", ()),
    ],
)
def test_tools_called_is_read_tolerantly(value: str, calls: tuple[tuple[str, ...], ...]) -> None:
    block = parse(f"Kind: other\nTools called: {value}")
    assert block is not None
    assert block.tools_called == tuple(ToolCall(*call) for call in calls)


@pytest.mark.parametrize(
    ("value", "read"),
    [
        ('"plain"', "plain"),
        ("„German“", "German"),
        ("“English”", "English"),
        ("«français»", "français"),
        ("»Schweiz«", "Schweiz"),
        ("‹innen›", "innen"),
        ("'single'", "single"),
        ('„German"', '„German"'),  # amended §3.4: only the listed pairs, not any two marks
        ("«mixed”", "«mixed”"),
        ('""quoted" twice"', '"quoted" twice'),  # only the outer pair goes
        ("unquoted", "unquoted"),
        ('"', '"'),
    ],
)
def test_answer_and_expected_lose_their_surrounding_quotes(value: str, read: str) -> None:
    """W10, W11, §3.4 as amended: one pair of the quotation marks people type."""
    block = parse(f"Kind: other\nAnswer (excerpt): {value}\nExpected: {value}")
    assert block is not None
    assert (block.answer_excerpt, block.expected) == (read, read)


def test_guillemets_around_expected_go_so_check_3_can_pass() -> None:
    """SPEC §3.4 (amended): ``Expected: «Konzept-Ansatz CHF 150»`` is the bare value, so a reply
    that states it passes check 3 (it never could with the guillemets kept)."""
    block = parse("Kind: not-found\nExpected: «Konzept-Ansatz CHF 150»")
    assert block is not None
    assert block.expected == "Konzept-Ansatz CHF 150"
    assert correct("Der Konzept-Ansatz CHF 150 steht im Firmenprofil.", block.expected)


QUOTE_PAIRS = (('"', '"'), ("„", "“"), ("“", "”"), ("«", "»"), ("»", "«"), ("‹", "›"), ("'", "'"))


@settings(max_examples=200, deadline=None)
@given(
    value=st.text(st.characters(exclude_categories=("Cc", "Cs", "Zl", "Zp"))),
    pair=st.sampled_from(QUOTE_PAIRS),
)
def test_exactly_one_pair_of_quotes_goes(value: str, pair: tuple[str, str]) -> None:
    """SPEC §3.4 (amended): one surrounding pair is stripped, whatever the value holds, so a
    quoted value reads back as itself, in Expected and Answer (excerpt) alike; a value that
    no pair frames is left as it is, so stripping is idempotent once the pair has gone."""
    opening, closing = pair
    quoted = opening + value + closing
    assert unquoted(quoted) == value
    block = parse(f"Kind: other\nAnswer (excerpt): {quoted}\nExpected: {quoted}")
    assert block is not None
    assert (block.answer_excerpt, block.expected) == (value, value)
    framed = len(value) >= 2 and (value[0], value[-1]) in QUOTE_PAIRS
    assert (unquoted(value) == value) is not framed


@pytest.mark.parametrize(
    "text",
    [None, "", "The chat got it wrong.", "Agent: A/B\nModel: m", "kind not-found", "Kind:x"],
)
def test_a_text_without_a_kind_line_is_no_block(text: str | None) -> None:
    """W38: such a report counts under the unknown agent."""
    assert parse(text) is None


def test_labels_match_in_any_case_and_order_with_whitespace_trimmed() -> None:
    """W39, §3.4."""
    block = parse("  AGENT : A/B\r\nkind:   fabricated  \r\ntools   CALLED: 0")
    assert block == LabelledBlock(kind="fabricated", agent="A/B", tools_called=())


def test_missing_lines_are_none() -> None:
    assert parse("Kind: other") == LabelledBlock(kind="other")


def test_the_agent_is_the_path_before_a_parenthesis() -> None:
    """W06, §3.4: a display name after the path is not part of it."""
    block = parse("Kind: other\nAgent: AgenticOffice/Agent/OfficeCoach (Office Coach)")
    assert block is not None
    assert block.agent == "AgenticOffice/Agent/OfficeCoach"


def test_unknown_labels_are_kept_in_extra_as_written() -> None:
    block = parse("Kind: other\nReviewer Note: see thread\nTicket-Id: 42")
    assert block is not None
    assert block.extra == {"Reviewer Note": "see thread", "Ticket-Id": "42"}


def test_a_duplicate_label_is_dropped_with_its_continuation_lines() -> None:
    block = parse("Kind: other\nEvidence: first\nmore\nEVIDENCE: second\nstill second")
    assert block is not None
    assert block.evidence == "first\nmore"


def test_lines_without_a_label_continue_the_previous_value() -> None:
    """§3.4: prose before the first label is not part of the block."""
    block = parse("Preamble.\nKind: other\nEvidence: get a → readable\n  and b → not readable\n")
    assert block is not None
    assert block.evidence == "get a → readable\n  and b → not readable"


def test_a_line_shaped_like_a_label_starts_a_new_label_even_mid_value() -> None:
    """Proposed: a label is any label-shaped text before ": ", so hand-written prose of that
    shape becomes an unknown label rather than a continuation."""
    block = parse("Kind: other\nEvidence: get a → readable\nand b: not readable")
    assert block is not None
    assert (block.evidence, block.extra) == ("get a → readable", {"and b": "not readable"})


def test_a_value_line_that_reads_as_a_label_is_escaped_with_a_backslash() -> None:
    """Proposed: compose escapes, parse unescapes, so no value can forge a label."""
    block = LabelledBlock(kind="other", evidence="a\nKind: retrieval\n\\b\nplain")
    text = compose(block)
    assert text == "Kind: other\nEvidence: a\n\\Kind: retrieval\n\\\\b\nplain"
    assert parse(text) == block


@pytest.mark.parametrize("label", ["Kind", "tools called", "Not: shaped", "1st", " Padded"])
def test_compose_refuses_an_extra_label_that_would_not_read_back(label: str) -> None:
    with pytest.raises(ValueError, match="would not read back"):
        compose(LabelledBlock(kind="other", extra={label: "x"}))


# ---- properties ----------------------------------------------------------------------------

PROPERTIES = settings(max_examples=200, deadline=None)
KNOWN = {label.casefold() for label in LABELS}
NEXT_ITEM = re.compile(r"[,;]\s*[^\s(),;→]+\(")  # what a result must not hold (module docstring)

one_line = st.text(st.characters(exclude_characters="\r\n"), max_size=24)
tricky_line = st.sampled_from(
    ["Kind: retrieval", "\\", "\\\\Kind: x", "  Agent: a", "note: b", "", "x:", "Expected:", '"']
)
lines = st.lists(st.one_of(one_line, tricky_line), min_size=2, max_size=5).map("\n".join)
raw_text = st.one_of(one_line, lines)
text = raw_text.map(str.strip)  # values are trimmed as a whole
no_space = st.characters(exclude_categories=("Cc", "Cs", "Zs", "Zl", "Zp"), exclude_characters="(")
in_parenthesis = st.characters(
    exclude_categories=("Cc", "Cs", "Zl", "Zp"), exclude_characters="(),;"
)
said = st.text(in_parenthesis, min_size=1, max_size=12).map(str.strip).filter(bool)


@st.composite
def model_lines(draw: st.DrawFn) -> ModelLine:
    actual = draw(st.text(no_space, min_size=1, max_size=16))
    requested = draw(st.none() | said.filter(lambda r: r.casefold() != "same" and r != actual))
    return ModelLine(actual, requested, draw(st.none() | said))


balanced_arguments = st.recursive(
    st.text(st.characters(exclude_characters="()\r"), max_size=10)
    | st.sampled_from([", ", " → ", "->", "; ", "\n", "\nKind: x", "\n\\y", "a: b"]),
    lambda inner: st.lists(inner, max_size=3).map("".join) | inner.map(lambda s: f"({s})"),
    max_leaves=8,
)
tool_calls = st.builds(
    ToolCall,
    name=st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,10}", fullmatch=True),
    arguments=balanced_arguments,
    result=one_line.map(str.strip).filter(lambda r: not NEXT_ITEM.search(r)),
)
extra_label = st.from_regex(r"[A-Za-z][A-Za-z0-9_\-]{0,10}( [A-Za-z0-9]{1,5})?", fullmatch=True)
extras = st.dictionaries(
    extra_label.filter(lambda k: k.casefold() not in KNOWN), text, max_size=3
).filter(lambda d: len({k.casefold() for k in d}) == len(d))

# What ``parse`` stores as the kind: a canonical one, or any text that names no kind (§3.4).
stored_kinds = st.sampled_from([kind.value for kind in Kind]) | text.filter(
    lambda k: parse_kind(k) is None
)

blocks = st.builds(
    LabelledBlock,
    kind=stored_kinds,
    thread=st.none() | text,
    message=st.none() | text,
    agent=st.none() | text.filter(lambda a: " (" not in a),
    model=st.none() | model_lines(),
    tools_called=st.none() | st.lists(tool_calls, max_size=4).map(tuple),
    answer_excerpt=st.none() | raw_text,  # quoted: whitespace at the ends survives
    expected=st.none() | raw_text,
    evidence=st.none() | text,
    addressee=st.none() | text,
    extra=extras,
)


@PROPERTIES
@given(blocks)
def test_parse_reads_back_every_field_compose_wrote(block: LabelledBlock) -> None:
    assert parse(compose(block)) == block


@PROPERTIES
@given(st.text())
def test_parse_never_raises_on_arbitrary_text(anything: str) -> None:
    parse(anything)


fragments = st.sampled_from(
    [
        *("Kind: ", "Model: ", "Tools called: 2 — ", "Answer (excerpt): „", "(", ")", " → ", "->"),
        *(", ", "; ", "\n", "\r", "\\", "requested:", "harness:", "Get(", '"', ": "),
    ]
)


@PROPERTIES
@given(st.lists(fragments | st.text(max_size=5), max_size=30).map("".join))
def test_parse_never_raises_on_text_made_of_block_fragments(anything: str) -> None:
    parse(anything)


@PROPERTIES
@given(extra_label.filter(lambda k: k.casefold() not in KNOWN), one_line.map(str.strip))
def test_an_unknown_label_is_kept_with_its_value(label: str, value: str) -> None:
    block = parse(f"Kind: other\n{label}: {value}")
    assert block is not None
    assert block.extra == {label: value}


@PROPERTIES
@given(
    st.sampled_from(["Kind", "Thread", "Evidence", "Addressee"]),
    one_line.map(str.strip),
    one_line.map(str.strip),
)
def test_the_first_of_duplicate_labels_wins(label: str, first: str, second: str) -> None:
    block = parse(f"Kind: other\n{label}: {first}\n{label.upper()}: {second}")
    assert block is not None
    field = {"Kind": "kind", "Thread": "thread", "Evidence": "evidence", "Addressee": "addressee"}
    expected = "other" if label == "Kind" else first
    assert getattr(block, field[label]) == expected


@settings(max_examples=50, deadline=None)
@given(
    st.sampled_from([kind.value for kind in Kind]).flatmap(
        lambda known: st.tuples(
            st.just(known),
            st.lists(st.booleans(), min_size=len(known), max_size=len(known)),
            st.sampled_from(["", " ", "\t"]),
        )
    )
)
def test_a_known_kind_in_any_case_is_stored_in_its_canonical_spelling(
    drawn: tuple[str, list[bool], str],
) -> None:
    """SPEC §3.4 as amended: ``Kind: Fabricated`` is ``fabricated``."""
    known, flips, pad = drawn
    spelled = "".join(c.upper() if up else c for c, up in zip(known, flips, strict=True))
    block = parse(f"Kind: {pad}{spelled}{pad}\nAgent: A/B")
    assert block is not None
    assert block.kind == known


@pytest.mark.parametrize("written", ["Halluzination", "FABRICATED-ish", "not found", ""])
def test_an_unknown_kind_is_kept_as_written(written: str) -> None:
    """SPEC §3.4: an unknown kind is kept as text; it is never taken for a known one."""
    block = parse(f"Kind: {written}\nAgent: A/B")
    assert block is not None
    assert block.kind == written
