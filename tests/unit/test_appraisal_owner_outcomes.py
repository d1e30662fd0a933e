"""Owner outcomes on a draft (SPEC M33) as a decision, and what drafts, questions, stops and
outcomes contribute (M28, M30–M32), as tables."""

from datetime import UTC, datetime, timedelta

import pytest

from contracts.errors import Conflict, Refused
from contracts.neighbours import RunCounters
from contracts.runtime_facts import (
    DraftStatus,
    OwnerOutcomeRecorded,
    OwnerStop,
    OwnerVerdict,
    QuestionStatus,
    RunDraft,
    RunQuestion,
    RunRequest,
)
from services.appraisal.charter import EMPTY
from services.appraisal.derivation import goal_errors
from services.appraisal.facts import Facts, OwnerOutcomeFact, RunFact
from services.appraisal.owner_outcomes import DraftOutcomes

AT = datetime(2026, 12, 2, 9, tzinfo=UTC)


def outcome(outcome_id: str, verdict: str, **extra: str) -> OwnerOutcomeRecorded:
    return OwnerOutcomeRecorded.model_validate(
        {"outcomeId": outcome_id, "runId": "r", "draftId": "d", "verdict": verdict,
         "recordedAt": AT.isoformat(), **extra}
    )  # fmt: skip


def drafts(*given: OwnerOutcomeRecorded) -> DraftOutcomes:
    aggregate = DraftOutcomes.open("t", "d", AT)
    for each in given:
        aggregate.record(each, by="alice", at=AT)
    aggregate.collect_events()
    return aggregate


FIRST = outcome("o1", "error_exposed")


@pytest.mark.parametrize(
    ("given", "when", "error", "field"),
    [
        ((), outcome("o1", "harm"), Refused, "commitment"),  # harm needs a commitment
        ((FIRST,), outcome("o2", "no_issue"), Conflict, "supersedes"),  # one active
        ((FIRST,), outcome("o2", "no_issue", supersedes="o9"), Conflict, "supersedes"),
        ((FIRST,), outcome("o2", "withdrawn"), Refused, "supersedes"),  # names the prior
        ((), outcome("o2", "withdrawn", supersedes="o1"), Conflict, "supersedes"),
    ],
)
def test_what_an_owner_outcome_may_not_do(
    given: tuple[OwnerOutcomeRecorded, ...], when: OwnerOutcomeRecorded, error: type,
    field: str,
) -> None:  # fmt: skip
    aggregate = drafts(*given)
    with pytest.raises(error) as raised:
        aggregate.record(when, by="alice", at=AT)
    assert raised.value.details["field"] == field
    assert aggregate.collect_events() == []


@pytest.mark.parametrize(
    ("given", "when", "active", "event"),
    [
        ((), outcome("o1", "harm", commitment="task:T-1"), "o1", "Recorded"),
        ((FIRST,), outcome("o2", "no_issue", supersedes="o1"), "o2", "Recorded"),
        ((FIRST,), outcome("o2", "withdrawn", supersedes="o1"), None, "Withdrawn"),
        ((FIRST,), FIRST, "o1", None),  # the same outcome again: nothing new
    ],
)
def test_what_an_owner_outcome_does(
    given: tuple[OwnerOutcomeRecorded, ...], when: OwnerOutcomeRecorded, active: str | None,
    event: str | None,
) -> None:  # fmt: skip
    aggregate = drafts(*given)
    aggregate.record(when, by="alice", at=AT)
    assert aggregate.active == active
    assert [type(e).__name__ for e in aggregate.collect_events()] == ([event] if event else [])


def run(i: int, ok: bool = True, **items: object) -> RunFact:
    return RunFact(f"r{i}", "coach", AT + timedelta(minutes=i), counters=RunCounters(),
                   succeeded=ok, **items)  # type: ignore[arg-type]  # fmt: skip


def signed(*runs: RunFact, outcomes: tuple[OwnerOutcomeFact, ...] = ()) -> list[tuple[str, float]]:
    facts = Facts(runs=runs, owner_outcomes=outcomes)
    return sorted((e.outcome, e.sign) for e in goal_errors(facts, EMPTY, AT))


def draft(status: DraftStatus, draft_id: str = "d") -> tuple[RunDraft, ...]:
    return (RunDraft.model_validate({"draftId": draft_id, "status": status}),)


def question(status: QuestionStatus) -> tuple[RunQuestion, ...]:
    return (RunQuestion.model_validate({"questionId": "q", "status": status}),)


def stop(resumed: bool) -> tuple[OwnerStop, ...]:
    return (OwnerStop.model_validate({"stopId": "s", "resumed": resumed}),)


def request(closed: bool, draft: str | None = None) -> tuple[RunRequest, ...]:
    return (RunRequest.model_validate({"requestId": "rq", "closed": closed, "draftId": draft}),)


@pytest.mark.parametrize(
    ("runs", "expected"),
    [
        ((run(0, drafts=draft(DraftStatus.pending)),), []),  # M30: no verdict yet
        ((run(0, questions=question(QuestionStatus.parked)),), []),
        ((RunFact("r", "coach", AT, counters=RunCounters(shutdowns=2, parkings=1,
                                                         legacyInterrupts=1)),), []),  # M30
        ((run(0, drafts=draft(DraftStatus.sent_unchanged)),), [("draft-sent-unchanged", 1.0)]),
        ((run(0, drafts=draft(DraftStatus.sent_edited)),), [("draft-sent-edited", -1.0)]),
        ((run(0, drafts=draft(DraftStatus.rejected)),), [("draft-rejected", -1.0)]),
        ((run(0, questions=question(QuestionStatus.answered)),), [("question-answered", 0.5)]),
        ((run(0, False, questions=question(QuestionStatus.answered)),), []),  # not completed
        ((run(0, questions=question(QuestionStatus.abandoned)),), [("question-abandoned", -0.5)]),
        ((run(0, stops=stop(False)),), [("owner-stop-abandoned", -0.5)]),  # M31
        ((run(0, stops=stop(False)), run(1, stops=stop(True))),
         [("owner-stop-redirect", -0.5)]),  # M31: once, a redirect
        ((run(0, stops=stop(True)), run(1, stops=stop(False))), [("owner-stop-redirect", -0.5)]),
        ((run(0, drafts=draft(DraftStatus.pending)), run(1, drafts=draft(DraftStatus.rejected))),
         [("draft-rejected", -1.0)]),  # the latest report of a draft stands, counted once
        # M28, D154: a triaged request closed without a linked draft; with one, the draft's
        # outcome counts instead; still open, nothing; reported twice, once
        ((run(0, requests=request(True)),), [("request-closed-without-draft", -0.5)]),
        ((run(0, requests=request(True, "d"), drafts=draft(DraftStatus.sent_unchanged)),),
         [("draft-sent-unchanged", 1.0)]),
        ((run(0, requests=request(False)),), []),
        ((run(0, requests=request(False)), run(1, requests=request(True))),
         [("request-closed-without-draft", -0.5)]),
    ],
)  # fmt: skip
def test_what_the_runtime_s_items_contribute(
    runs: tuple[RunFact, ...], expected: list[tuple[str, float]]
) -> None:
    assert signed(*runs) == expected


@pytest.mark.parametrize(
    ("verdict", "expected"),
    [
        (OwnerVerdict.error_exposed, [("owner-error_exposed", -1.0)]),  # M32: replaces it
        (OwnerVerdict.harm, [("owner-harm", -1.0)]),
        (OwnerVerdict.expectation_missed, [("owner-expectation_missed", -1.0)]),
        (OwnerVerdict.no_issue, [("draft-sent-unchanged", 1.0)]),  # the draft's own stands
    ],
)
def test_a_linked_negative_owner_outcome_replaces_the_draft_s_contribution(
    verdict: OwnerVerdict, expected: list[tuple[str, float]]
) -> None:
    sent = run(0, drafts=draft(DraftStatus.sent_unchanged))
    outcomes = (OwnerOutcomeFact("o", "r0", "d", verdict),)
    assert signed(sent, outcomes=outcomes) == expected
    errors = goal_errors(Facts(runs=(sent,), owner_outcomes=outcomes), EMPTY, AT)
    assert all(e.visible for e in errors if e.sign < 0)  # it reached somebody after delivery
