"""Every event the Report aggregate can emit maps to its integration event:
random drafts and composed wrong-answer reports (with any spelling of ``Kind:``), then
submit, review moves and hand-over delivery records, decided by the real handlers and stored in
the eventsourcing library's in-memory persistence; whatever was stored and has a publication
goes through the relay's mapping (``services.kafka.publication.to_message``) without raising."""

from contextlib import suppress
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contracts.errors import DomainError
from contracts.report_kinds import Kind
from contracts.reports import (
    ComposeWrongAnswer,
    DraftReport,
    RecordHandOverDelivery,
    ReviewReport,
    ReviewReportCommand,
    SubmitReport,
)
from contracts.scalars import is_blank
from services.kafka.publication import to_message
from services.processes.published import by_event
from tests.unit.test_report_facts import handle, memory_store, stored_events

PROPERTIES = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ref = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9/_.\- ]{0,16}[A-Za-z0-9]", fullmatch=True)
words = st.text(st.characters(exclude_categories=("Cs", "Cc")), min_size=1, max_size=30)


def said(text: str) -> bool:
    """Text the door takes as saying something (``contracts.scalars.is_blank``)."""
    return not is_blank(text)


@st.composite
def spellings(draw: st.DrawFn) -> str:
    """A known kind in random case and padding, or any other text (an unknown kind)."""
    known = draw(st.sampled_from([kind.value for kind in Kind]))
    flips = draw(st.lists(st.booleans(), min_size=len(known), max_size=len(known)))
    cased = "".join(c.upper() if up else c for c, up in zip(known, flips, strict=True))
    return draw(st.sampled_from(["", " ", "  "])) + cased + draw(st.sampled_from(["", " "]))


kinds = spellings() | words.filter(lambda w: "\n" not in w and "\r" not in w)


@st.composite
def free_text_drafts(draw: st.DrawFn) -> DraftReport:
    lines = [f"Kind: {draw(kinds)}"] if draw(st.booleans()) else []
    for label in ("Agent", "Model", "Expected", "Addressee", "Tools called"):
        if draw(st.booleans()):
            lines.append(f"{label}: {draw(words)}")
    lines.extend(draw(st.lists(words, max_size=2)))
    order = draw(st.permutations(lines))
    return DraftReport.model_validate(
        {
            "category": draw(st.sampled_from(["bug", "idea", "praise", "question", "answer"])),
            "message": draw(words.filter(said)),
            "extraContext": "\n".join(order) if order else None,
        }
    )


@st.composite
def composed_reports(draw: st.DrawFn) -> ComposeWrongAnswer:
    node = draw(ref)
    calls = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "name": st.sampled_from(["Get", "Search", "Summarise"]),
                    "arguments": st.sampled_from([node, "", "elsewhere"]),
                    "result": st.sampled_from(["ok", "error 500", "not found", ""]) | words,
                }
            ),
            max_size=3,
        )
    )
    evidence = st.none() | st.fixed_dictionaries({"node": st.just(node), "readable": st.booleans()})
    return ComposeWrongAnswer.model_validate(
        {
            "thread": draw(ref),
            "messageRef": draw(ref),
            "reply": {
                "agentName": draw(ref),
                "modelName": draw(ref),
                "requestedModelName": draw(st.none() | ref),
                "harness": draw(st.none() | ref),
                "toolCalls": calls,
                "text": draw(words),
            },
            "account": draw(words.filter(said)),
            "expected": draw(st.none() | words),
            "evidence": draw(evidence),
            "kind": draw(st.none() | st.sampled_from([kind.value for kind in Kind])),
            "maintainers": draw(st.lists(ref, max_size=2)),
        }
    )


later_steps = st.lists(
    st.sampled_from(["Triaged", "Resolved", "WontFix", "New"]).map(lambda s: ("review", s))
    | st.tuples(st.just("delivery"), st.none() | st.sampled_from([200, 404, 503]), st.booleans())
    | st.just(("submit",)),
    max_size=6,
)


@PROPERTIES
@given(st.one_of(free_text_drafts(), composed_reports()), later_steps)
def test_every_event_a_report_emits_maps_through_its_publication(
    first: DraftReport | ComposeWrongAnswer, steps: list[tuple[Any, ...]]
) -> None:
    store = memory_store()
    report_id = handle(store, first, "draft").report_id
    handle(store, SubmitReport(report_id=report_id), "submit")
    for n, step in enumerate(steps):
        command: Any
        if step[0] == "review":
            command = ReviewReportCommand(report_id=report_id, review=ReviewReport(status=step[1]))
        elif step[0] == "delivery":
            command = RecordHandOverDelivery(
                report_id=report_id,
                status_code=step[1],
                error=None if step[1] == 200 else "failed",
                final=step[2],
            )
        else:
            command = SubmitReport(report_id=report_id)
        with suppress(DomainError):  # a refused move emits nothing; what was emitted matters
            handle(store, command, f"step-{n}")
    for event in stored_events(store):
        publication = by_event().get(type(event))
        if publication is not None:
            to_message(publication, event, "urn:test")
        if type(event).__name__ == "AgentOwnerNotified":
            assert event.kind in {kind.value for kind in Kind}
