"""The labelled block of a wrong-answer report: plain `Label: value` lines (SPEC W04–W13, §3.4).

``compose`` writes the block that goes into extraContext; ``parse`` reads one back, tolerantly,
and never raises. Decisions where SPEC leaves room (proposed; pinned in the unit tests):

- A *label line*: the text before its first ``": "`` (or a final ``":"``), trimmed, is a letter
  then up to 39 letters, digits, spaces or ``( ) ' / _ -``. Other lines continue the value.
- Line breaks are ``\\n``, ``\\r\\n`` or ``\\r``. ``compose`` puts a backslash before a continuation
  line that would read as a label or starts with a backslash; ``parse`` drops one leading
  backslash from every continuation line. Values are trimmed as a whole; text before the first
  label is not part of the block; a duplicate label goes with its continuation lines.
- Kind: a known kind in any case reads as its canonical spelling; an unknown one stays as written.
- Model: no parenthesis when neither a requested model nor a harness is known; ``same`` or the
  actual model's own name as ``requested`` reads as None (W08).
- Tools called: items joined with ``", "``; arguments read back intact when their parentheses
  balance; a new item starts at ``", "`` or ``"; "`` before ``Name(``, which results must not hold.
"""

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from contracts.report_kinds import canonical_kind


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
# SPEC §3.4 (amended): one pair of the quotation marks people type in English, German, French
# and Swiss text; a mismatched pair is not a pair and stays.
_QUOTE_PAIRS = frozenset(
    {('"', '"'), ("„", "“"), ("“", "”"), ("«", "»"), ("»", "«"), ("‹", "›"), ("'", "'")}
)
_MODEL_NAME = re.compile(r"[^\s(]+")
_TOOLS_HEAD = re.compile(r"\s*(?:[0-9]+\s*(?:[—–:-]\s*)?)?")
_TOOL_NAME = r"[^\s(),;→]+"
_ITEM_START = re.compile(rf"\s*({_TOOL_NAME})\(")
_NEXT_ITEM = re.compile(rf"[,;]\s*(?={_TOOL_NAME}\()")
_ARROW = re.compile(r"\s*(?:→|->)\s*")
_AFTER_ARGUMENTS = re.compile(r"\s*(?:→|->|[,;]|\Z)")


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
        kind=None if kind is None else canonical_kind(kind),  # SPEC §3.4: Fabricated → fabricated
        thread=thread,
        message=message,
        agent=None if agent is None else agent.split(" (", 1)[0].strip(),
        model=_model(model),
        tools_called=_tool_calls(tools),
        answer_excerpt=unquoted(answer),
        expected=unquoted(expected),
        evidence=evidence,
        addressee=addressee,
        extra={written[key]: value for key, value in found.items() if key not in _KEYS},
    )


def unquoted(value: str | None) -> str | None:
    """The value without one surrounding pair of the quotation marks people type (SPEC §3.4,
    amended): ``«Konzept-Ansatz CHF 150»`` is ``Konzept-Ansatz CHF 150``. Only one pair, and
    only when both ends make a pair; marks inside the value stay."""
    if value is None or len(value) < 2:
        return value
    if (value[0], value[-1]) in _QUOTE_PAIRS:
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
    arrows and nested calls; a stray ``)`` closes where an arrow, a separator or the end follows
    it, else the first stray one does, unless no ``)`` closes: then the rest are arguments.
    Every scan stops at the next item after a stray ``)``, so parsing stays linear."""
    depth, stray = 0, None
    for index in range(start, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")" and depth > 0:
            depth -= 1
        elif text[index] == ")":
            if _AFTER_ARGUMENTS.match(text, index + 1):
                return index
            stray = index if stray is None else stray
        elif stray is not None and _NEXT_ITEM.match(text, index):
            break
    return len(text) if stray is None else stray
