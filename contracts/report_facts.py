"""A report's facts as ``Report.Drafted`` stores them: decided once, at the door.

A composed wrong-answer report takes them straight from the structured reply record; free text
(``DraftReport.extraContext``) is parsed once, in the command handler. Everything downstream
(``Report.submit``, the Inbox, the eval-case lift) reads these stored facts, never the text, so
a change to the parser never changes what a rebuild produces.

They are stored as typed dicts: the store's JSON transcoder keeps str, list, dict and None as
they are, so the facts read back exactly as written, without a custom transcoding. Readers turn
them into a ``LabelledBlock`` with ``block_of``.
"""

from typing import TypedDict

from contracts.labelled_block import LabelledBlock, ModelLine, ToolCall


class ToolCallFacts(TypedDict):
    name: str
    arguments: str
    result: str


class ModelFacts(TypedDict):
    actual: str
    requested: str | None
    harness: str | None


class ReportFacts(TypedDict):
    """The labelled block's fields; ``kind`` is canonical when known, else the text written."""

    kind: str | None
    thread: str | None
    message: str | None
    agent: str | None
    model: ModelFacts | None
    tools_called: list[ToolCallFacts] | None
    answer_excerpt: str | None
    expected: str | None
    evidence: str | None
    addressee: str | None
    extra: dict[str, str]


def facts_of(block: LabelledBlock | None) -> ReportFacts | None:
    """The block as stored; None means the report has no labelled block (W38)."""
    if block is None:
        return None
    model = block.model
    calls = block.tools_called
    return ReportFacts(
        kind=block.kind,
        thread=block.thread,
        message=block.message,
        agent=block.agent,
        model=None
        if model is None
        else ModelFacts(actual=model.actual, requested=model.requested, harness=model.harness),
        tools_called=None
        if calls is None
        else [ToolCallFacts(name=c.name, arguments=c.arguments, result=c.result) for c in calls],
        answer_excerpt=block.answer_excerpt,
        expected=block.expected,
        evidence=block.evidence,
        addressee=block.addressee,
        extra=dict(block.extra),
    )


def block_of(facts: ReportFacts | None) -> LabelledBlock | None:
    """The stored facts as a block, for readers; the inverse of ``facts_of``."""
    if facts is None:
        return None
    model = facts["model"]
    calls = facts["tools_called"]
    return LabelledBlock(
        kind=facts["kind"],
        thread=facts["thread"],
        message=facts["message"],
        agent=facts["agent"],
        model=None if model is None else ModelLine(**model),
        tools_called=None if calls is None else tuple(ToolCall(**call) for call in calls),
        answer_excerpt=facts["answer_excerpt"],
        expected=facts["expected"],
        evidence=facts["evidence"],
        addressee=facts["addressee"],
        extra=dict(facts["extra"]),
    )
