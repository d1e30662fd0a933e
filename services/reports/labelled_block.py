"""The labelled block of a wrong-answer report: plain `Label: value` lines (SPEC W04–W13, §3.4).

``compose`` writes the block that goes into extraContext; ``parse`` reads one back, tolerantly,
and never raises. Decisions where SPEC leaves room (proposed, pinned in
tests/unit/test_labelled_block.py):

- A *label line* is one whose text before the first ``": "`` (or before a final ``":"``),
  trimmed, is label-shaped: a letter, then letters, digits, spaces, ``( ) ' / _ -``, at most
  40 characters in all. Every other line continues the previous value.
- Line breaks are ``\\n``, ``\\r\\n`` or ``\\r``; a value keeps its breaks as ``\\n``. ``compose``
  puts one backslash before a continuation line that would read as a label line or that
  already starts with a backslash; ``parse`` removes one leading backslash from every
  continuation line. So ``compose`` → ``parse`` is lossless for any value.
- A value is trimmed as a whole (inner lines keep their indentation); text before the first
  label line is not part of the block.
- A duplicate label is dropped together with its continuation lines (first wins).
- Model: the parenthesis is left out when there is neither a requested model nor a harness;
  ``requested: same`` or a requested model equal to the actual one parses as None (W08).
- Tools called: items are joined with ``", "``; a call's arguments survive when their
  parentheses balance (they may hold commas, arrows and line breaks); an item starts at
  ``", "`` or ``"; "`` followed by ``Name(``, so a result must not contain that.
"""

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ToolCall:
    """One entry of the answering message's toolCalls (W09)."""

    name: str
    arguments: str
    result: str


@dataclass(frozen=True)
class ModelLine:
    """The model that answered; ``requested`` is None when it was the one asked for (W07, W08)."""

    actual: str
    requested: str | None = None
    harness: str | None = None


@dataclass(frozen=True)
class LabelledBlock:
    """The fields of the block; None means the line is absent. Unknown labels land in ``extra``."""

    kind: str | None = None
    thread: str | None = None
    message: str | None = None
    agent: str | None = None
    model: ModelLine | None = None
    tools_called: tuple[ToolCall, ...] | None = None
    answer_excerpt: str | None = None
    expected: str | None = None
    evidence: str | None = None
    addressee: str | None = None
    extra: Mapping[str, str] = field(default_factory=dict)


# SPEC W05: the labels, in the order they are emitted.
LABELS: tuple[str, ...] = (
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
_KEYS = tuple(label.casefold() for label in LABELS)

_LABEL_LINE = re.compile(r"\s*([^\W\d_][\w ()'/-]{0,39}?)\s*:(?:\s(.*))?")
_OPENING_QUOTES, _CLOSING_QUOTES = '"„“', '"“”'
_MODEL_NAME = re.compile(r"[^\s(]+")
_TOOLS_HEAD = re.compile(r"\s*(?:[0-9]+\s*(?:[—–:-]\s*)?)?")
_TOOL_NAME = r"[^\s(),;→]+"
_ITEM_START = re.compile(rf"\s*({_TOOL_NAME})\(")
_NEXT_ITEM = re.compile(rf"[,;]\s*(?={_TOOL_NAME}\()")
_ARROW = re.compile(r"\s*(?:→|->)\s*")
_AFTER_ARGUMENTS = re.compile(r"\s*(?:→|->|[,;]|\Z)")
_CLOSE_BEFORE_ARROW = re.compile(r"\)(?=\s*(?:→|->))")


def _key(label: str) -> str:
    return " ".join(label.split()).casefold()


def _label_line(line: str) -> tuple[str, str] | None:
    """The label and the first piece of the value, when the line is a label line."""
    hit = _LABEL_LINE.fullmatch(line)
    if hit is None:
        return None
    return hit.group(1), hit.group(2) or ""


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


# ---- compose -------------------------------------------------------------------------------


def compose(block: LabelledBlock) -> str:
    """The block as lines in the order of LABELS, then the extra labels; None fields are left out.

    Raises ValueError for an extra label that is not label-shaped or repeats a known one:
    written out, it would not read back as itself.
    """
    out: list[str] = []
    for label, value in _labelled_values(block):
        first, *rest = _lines(value)
        out.append(f"{label}: {first}")
        out.extend("\\" + line if _needs_escape(line) else line for line in rest)
    return "\n".join(out)


def _labelled_values(block: LabelledBlock) -> Iterator[tuple[str, str]]:
    values = (
        block.kind,
        block.thread,
        block.message,
        block.agent,
        None if block.model is None else _model_text(block.model),
        None if block.tools_called is None else _tools_text(block.tools_called),
        None if block.answer_excerpt is None else f'"{block.answer_excerpt}"',  # W10
        None if block.expected is None else f'"{block.expected}"',  # W11
        block.evidence,
        block.addressee,
    )
    yield from (
        (label, value) for label, value in zip(LABELS, values, strict=True) if value is not None
    )
    for label, value in block.extra.items():
        shaped = _label_line(f"{label}:")
        if shaped is None or shaped[0] != label or _key(label) in _KEYS:
            raise ValueError(f"extra label {label!r} would not read back as itself")
        yield label, value


def _needs_escape(line: str) -> bool:
    return line.startswith("\\") or _label_line(line) is not None


def _model_text(model: ModelLine) -> str:
    """SPEC W07: ``<actual> (requested: <model|same>; harness: <h>)``."""
    if model.harness is not None:
        return f"{model.actual} (requested: {model.requested or 'same'}; harness: {model.harness})"
    if model.requested is not None:
        return f"{model.actual} (requested: {model.requested})"
    return model.actual


def _tools_text(calls: tuple[ToolCall, ...]) -> str:
    """SPEC W09: ``<N> — Tool(args) → result, …``, or ``0`` when nothing was called."""
    if not calls:
        return "0"
    items = ", ".join(f"{call.name}({call.arguments}) → {call.result}" for call in calls)
    return f"{len(calls)} — {items}"


# ---- parse ---------------------------------------------------------------------------------


def parse(text: str | None) -> LabelledBlock | None:
    """The block in ``text``, or None when it has no ``Kind:`` line ("no block", W38). SPEC §3.4."""
    if not text:
        return None
    values: dict[str, list[str]] = {}
    written: dict[str, str] = {}
    current: list[str] | None = None
    for line in _lines(text):
        labelled = _label_line(line)
        if labelled is None:
            if current is not None:
                current.append(line.removeprefix("\\"))
            continue
        label, first = labelled
        key = _key(label)
        if key in values:
            current = None  # first wins; the duplicate's continuation lines go with it
            continue
        written[key] = label
        current = values[key] = [first]
    if "kind" not in values:
        return None
    found = {key: "\n".join(lines).strip() for key, lines in values.items()}
    kind, thread, message, agent, model, tools, answer, expected, evidence, addressee = (
        found.get(key) for key in _KEYS
    )
    return LabelledBlock(
        kind=kind,
        thread=thread,
        message=message,
        agent=None if agent is None else agent.split(" (", 1)[0].strip(),
        model=_model(model),
        tools_called=_tool_calls(tools),
        answer_excerpt=_unquoted(answer),
        expected=_unquoted(expected),
        evidence=evidence,
        addressee=addressee,
        extra={written[key]: value for key, value in found.items() if key not in _KEYS},
    )


def _unquoted(value: str | None) -> str | None:
    if value is None or len(value) < 2:
        return value
    if value[0] in _OPENING_QUOTES and value[-1] in _CLOSING_QUOTES:
        return value[1:-1]
    return value


def _model(value: str | None) -> ModelLine | None:
    """The name runs to the first whitespace or ``(``; requested and harness come after it."""
    name = None if value is None else _MODEL_NAME.match(value)
    if value is None or name is None:
        return None
    actual, rest = name.group(), value[name.end() :]
    requested = harness = None
    opening = rest.find("(")
    if opening >= 0:
        inner = rest[opening + 1 :]
        inner = inner[: inner.rfind(")")] if ")" in inner else inner
        for part in re.split(r"[;,]", inner):
            key, colon, said = part.partition(":")
            key, said = key.strip().casefold(), said.strip()
            if colon and key == "requested" and said.casefold() not in ("same", ""):
                requested = None if said == actual else said
            elif colon and key == "harness" and said:
                harness = said
    return ModelLine(actual=actual, requested=requested, harness=harness)


def _tool_calls(value: str | None) -> tuple[ToolCall, ...] | None:
    """A leading count, then ``Tool(args) → result`` items; the count itself is not kept."""
    if value is None:
        return None
    head = _TOOLS_HEAD.match(value)
    rest = value[head.end() :] if head else value
    calls: list[ToolCall] = []
    position = 0
    while (start := _ITEM_START.match(rest, position)) is not None:
        closing = _closing_parenthesis(rest, start.end())
        arguments = rest[start.end() : closing]
        position = closing + 1
        arrow = _ARROW.match(rest, position)
        position = arrow.end() if arrow else position
        following = _NEXT_ITEM.search(rest, position)
        end = following.start() if following else len(rest)
        calls.append(ToolCall(start.group(1), arguments, rest[position:end].strip()))
        if following is None:
            break
        position = following.end()
    return tuple(calls)


def _closing_parenthesis(text: str, start: int) -> int:
    """The ``)`` that closes a call's arguments. Balanced scanning, so arguments may hold commas,
    arrows and nested calls; a stray ``)`` closes only where an arrow, a separator or the end
    follows it; failing all that, the first ``)`` before an arrow, then the first at depth 0."""
    depth, first_at_depth_0 = 0, None
    for index in range(start, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")" and depth > 0:
            depth -= 1
        elif text[index] == ")":
            if _AFTER_ARGUMENTS.match(text, index + 1):
                return index
            first_at_depth_0 = index if first_at_depth_0 is None else first_at_depth_0
    before_arrow = _CLOSE_BEFORE_ARROW.search(text, start)
    if before_arrow is not None:
        return before_arrow.start()
    return len(text) if first_at_depth_0 is None else first_at_depth_0
