"""From the facts of a wrong answer to a report: classify by checking, then compose the block.

SPEC W04–W18, §3.3. The classification is a hypothesis with its evidence attached; the
reviewer decides (W18). Nothing here edits the node, grants access or answers again (W17).
"""

from collections.abc import Sequence

from contracts.errors import Refused
from contracts.labelled_block import (
    LabelledBlock,
    ModelLine,
    ToolCall,
    compose,
    unquoted,
)
from contracts.report_kinds import Kind
from contracts.reports import (
    MAX_EXTRA_CONTEXT,
    ComposeWrongAnswer,
    DraftReport,
    SidePanel,
    ToolCallRecord,
)
from services.reports.routing import addressee_text

LOOKUP_TOOLS = frozenset({"Get", "Search"})
FAILURE_WORDS = ("error", "fail", "not found", "404", "500", "timeout", "denied", "unavailable")
EXCERPT_CHARS = 200


def classify(facts: ComposeWrongAnswer) -> str:
    """The kind follows the check, not what the reporter believes (W14, W15)."""
    evidence = facts.evidence
    if evidence is None:
        return facts.kind or Kind.other.value
    if not evidence.readable:
        return Kind.no_access.value  # the reporter lacks a grant: the agent could not read it
    lookups = node_lookups(facts)
    if any(failed(call.result) for call in lookups):
        return Kind.retrieval.value  # the agent looked; the platform did not answer
    if not lookups:
        return Kind.not_found.value  # readable, and the agent did not look for it
    return facts.kind or Kind.other.value


def node_lookups(facts: ComposeWrongAnswer) -> list[ToolCallRecord]:
    """The Get/Search calls that named the evidence node (other tools never count)."""
    node = facts.evidence.node if facts.evidence else None
    return [
        call
        for call in facts.reply.tool_calls
        if call.name in LOOKUP_TOOLS and node and (node in call.arguments or node in call.result)
    ]


def failed(result: str) -> bool:
    lowered = result.casefold()
    return any(word in lowered for word in FAILURE_WORDS)


def evidence_line(facts: ComposeWrongAnswer) -> str | None:
    if facts.evidence is None:
        return None
    readable = "readable" if facts.evidence.readable else "not readable"
    line = f"get {facts.evidence.node} → {readable}"
    if facts.evidence.readable and not node_lookups(facts):
        called = {call.name for call in facts.reply.tool_calls}
        missing = [name for name in sorted(LOOKUP_TOOLS) if name not in called]
        line += f"; no {' or '.join(missing)} in toolCalls" if missing else "; node not looked up"
    return line


def compose_report(
    facts: ComposeWrongAnswer, registered: Sequence[str] = ()
) -> tuple[LabelledBlock, DraftReport]:
    """The block, built from the structured record (the facts the report stores), and
    the draft: message verbatim, thread and message in the side panel, the block's text in
    extraContext; retrieval is a bug, every other kind an answer. ``registered``: the agent's
    maintainers as the tenant's agent register holds them, the only source of the addressee
    (W13, decisions D25): the maintainers a reporter types are not read, and an agent the
    register does not hold is addressed as having none registered."""
    kind = classify(facts)
    reply = facts.reply
    requested = reply.requested_model_name
    block = LabelledBlock(
        kind=kind,
        thread=facts.thread,
        message=facts.message_ref,
        agent=reply.agent_name,
        model=ModelLine(
            actual=reply.model_name,
            # W08: named only when a different model answered than was asked for
            requested=requested if requested and requested != reply.model_name else None,
            harness=reply.harness,
        ),
        tools_called=tuple(ToolCall(c.name, c.arguments, c.result) for c in reply.tool_calls),
        answer_excerpt=excerpt(reply.text),
        # SPEC §3.4 (amended): the quotes a reporter types around the expected value are not
        # part of it, in the structured record as in the block's text, so the facts stored at
        # the door (and the eval case's mustAssert lifted from them) hold the bare value.
        expected=unquoted(facts.expected),
        evidence=evidence_line(facts),
        addressee=addressee_text(kind, reply.agent_name, list(registered)),
        extra={},
    )
    extra_context = compose(block)
    if len(extra_context) > MAX_EXTRA_CONTEXT:
        raise Refused(
            f"the labelled block would be {len(extra_context)} characters, over "
            f"{MAX_EXTRA_CONTEXT}: shorten expected or the tool calls",
            field="expected",
        )
    draft = DraftReport(
        category="bug" if kind == Kind.retrieval.value else "answer",
        message=facts.account,
        side_panel=SidePanel(thread=facts.thread, message=facts.message_ref),
        extra_context=extra_context,
        serves=facts.serves,
        trace_id=facts.trace_id,
        span_id=facts.span_id,
        gen_ai=facts.gen_ai,
    )
    return block, draft


def excerpt(text: str) -> str | None:
    flat = " ".join(text.split())
    if not flat:
        return None
    return flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 1] + "…"
