"""The lift: what an eval case asks, read from its report (SPEC W48–W51, §3.5).

- agent = ``Agent:``; prompt and context = the user's message the reported reply answered;
- mustGround = the nodes the evidence check found readable;
- mustAssert = ``Expected:``, never taken from the answer;
- mustNotAssert = for a ``fabricated`` report, the values the answer asserted (its numbers);
- model = none pinned: the run uses the configured default (§3.5).
An invented value is never the expected one (W50): a mustAssert equal to a mustNotAssert is
dropped.
"""

import re
from dataclasses import dataclass
from typing import Protocol

from contracts.errors import Refused
from contracts.labelled_block import LabelledBlock
from contracts.report_kinds import Kind
from services.evals.normalisation import contains_value, number_spans

READABLE_NODE = re.compile(r"get\s+(\S+)\s+→\s+readable", re.IGNORECASE)


class SourceReport(Protocol):
    """What a lift reads of the report a case is lifted from: the reports context's aggregate,
    as the store loads it by id, seen through the fields the lift needs."""

    status: str
    category: str
    prompt: str | None
    context: list[str]
    facts: LabelledBlock | None  # as stored when the report was drafted

    def check_visible_to(self, actor: str) -> None: ...


@dataclass(frozen=True)
class Definition:
    agent: str
    prompt: str
    context: list[str]
    must_ground: list[str]
    must_not_assert: list[str]
    must_assert: str | None
    model: str | None = None


def liftable(report: SourceReport) -> LabelledBlock:
    """A submitted answer report with a labelled block; anything else is refused (W49)."""
    if report.status == "Draft":
        raise Refused("a draft is not a report until it is submitted", field="source")
    block = report.facts  # as stored when the report was drafted, never the text re-parsed
    if block is None or not block.kind:
        raise Refused("the report has no labelled block (no Kind: line)", field="source")
    if report.category != "answer":
        raise Refused(
            f"only answer reports become eval cases; this one is a {report.category}",
            field="source",
        )
    if not block.agent:
        raise Refused("the report's block names no Agent:", field="source")
    if not report.prompt:
        raise Refused("the report does not carry the question the reply answered", field="source")
    return block


def lift(report: SourceReport) -> Definition:
    block = liftable(report)
    assert block.agent is not None
    assert report.prompt is not None
    must_not_assert = invented_values(block) if block.kind == Kind.fabricated else []
    # SPEC §3.4 (amended): the stored Expected is bare already. Quotes go at the door (the
    # parser; compose_report for a structured record) and in the Drafted v1 upcaster's parse.
    # A v2 fact that still holds quotes cannot be told on load from a free-text value whose
    # inner pair is its own ('"«x»"' reads «x»): facts decided at the door stay decided, and
    # such a case's mustAssert is patched.
    must_assert = block.expected
    if must_assert and any(contains_value(must_assert, v) for v in must_not_assert):
        must_assert = None  # W50: an invented value is never the expected one
    return Definition(
        agent=block.agent,
        prompt=report.prompt,
        context=list(report.context),
        must_ground=READABLE_NODE.findall(block.evidence or ""),
        must_not_assert=must_not_assert,
        must_assert=must_assert,
    )


def invented_values(block: LabelledBlock) -> list[str]:
    """The concrete values a fabricated answer asserted: the numbers in its excerpt."""
    return list(dict.fromkeys(span.strip() for span in number_spans(block.answer_excerpt or "")))
