"""The whole derivation of signed outcomes from one read's facts (SPEC M28–M34, M44, M45).

``outcomes.py`` holds the table and the rows of this service's own facts; here the agents'
runtime items (drafts, questions, owner stops, owner outcomes) are added, each counted once,
and the paid passes' numbers joined in. The table is a parameter, so a changed table reads
over the whole history at once.
"""

from collections.abc import Iterator, Mapping
from datetime import datetime

from contracts.runtime_facts import NEGATIVE_VERDICTS, DraftStatus, QuestionStatus, RunRequest
from services.appraisal.charter import Charter
from services.appraisal.facts import Facts, OwnerOutcomeFact, PassFact, RunFact
from services.appraisal.outcomes import (
    CONTRIBUTIONS,
    CUT_SHORT,
    DRAFT_OUTCOMES,
    Agency,
    Channel,
    Contribution,
    GoalError,
    goal_of,
    of_eval,
    of_feedback,
    of_report,
    of_run,
    signed,
)
from services.appraisal.setpoints import Store


def of_runtime(
    runs: tuple[RunFact, ...],
    outcomes: tuple[OwnerOutcomeFact, ...],
    charter: Charter,
    table: Mapping[str, Contribution],
) -> Iterator[GoalError]:
    """SPEC M28, M30–M33: drafts, questions, owner stops and triaged requests, each counted
    once however many resumed runs report it (the latest report of an item stands; a stop is
    a redirect if any report saw it resumed). A pending draft or parked question contributes
    nothing; a linked negative owner outcome replaces its draft's contribution with one −1.0;
    a request closed without a draft is −0.5, one with a draft counts through the draft."""
    drafts: dict[str, tuple[RunFact, DraftStatus]] = {}
    questions: dict[str, tuple[RunFact, QuestionStatus]] = {}
    stops: dict[str, tuple[RunFact, bool]] = {}
    requests: dict[str, tuple[RunFact, RunRequest]] = {}
    for run in sorted((r for r in runs if not r.development), key=lambda r: r.completed_at):
        for draft in run.drafts:
            drafts[draft.draft_id] = (run, draft.status)
        for question in run.questions:
            questions[question.question_id] = (run, question.status)
        for request in run.requests:
            requests[request.request_id] = (run, request)
        for stop in run.stops:
            resumed = stop.resumed or (stop.stop_id in stops and stops[stop.stop_id][1])
            stops[stop.stop_id] = (stops.get(stop.stop_id, (run, False))[0], resumed)
    active = {o.draft_id: o for o in outcomes if o.verdict in NEGATIVE_VERDICTS}
    for draft_id, (run, status) in drafts.items():
        goal = goal_of(run.serves, charter, Store.outbox)
        if draft_id in active:  # M32: one −1.0 in place of the draft's own
            verdict = active[draft_id].verdict.value
            yield from signed(table, f"owner-{verdict}", goal=goal, visible=True, cite=draft_id)
        elif status in DRAFT_OUTCOMES:
            sent = status is not DraftStatus.rejected
            yield from signed(table, DRAFT_OUTCOMES[status], goal=goal, visible=sent,
                              cite=draft_id)  # fmt: skip
    for question_id, (run, answer) in questions.items():
        goal = goal_of(run.serves, charter, Store.questions)
        if answer is QuestionStatus.answered and run.succeeded:
            yield from signed(table, "question-answered", goal=goal, visible=False,
                              cite=question_id)  # fmt: skip
        elif answer is QuestionStatus.abandoned:
            yield from signed(table, "question-abandoned", goal=goal, visible=False,
                              cite=question_id)  # fmt: skip
    for stop_id, (run, resumed) in stops.items():  # M31: once each
        goal = goal_of(run.serves, charter, Store.interventions)
        outcome = "owner-stop-redirect" if resumed else "owner-stop-abandoned"
        yield from signed(table, outcome, goal=goal, visible=False, cite=stop_id)
    for request_id, (run, request) in requests.items():  # M28: once each, the latest report
        if request.closed and request.draft_id is None:  # with a draft: the draft's row
            goal = goal_of(run.serves, charter, Store.requests)  # the front door's requests
            yield from signed(table, "request-closed-without-draft", goal=goal, visible=False,
                              cite=request_id)  # fmt: skip


def with_passes(errors: list[GoalError], passes: tuple[PassFact, ...]) -> list[GoalError]:
    """The appraiser adds its one signed error on the ``appraisal`` channel, cite
    ``appraiser`` (M23, M27, M44). ``controllable`` (M26) stays unset: only a counterfactual
    replayed from the run's recorded prefix may fill it (M44), and this service replays
    nothing; an intervention opinion (``opinion``, or ``probe`` in older records) is a
    model's word without the run, so it changes no label (decisions D153)."""
    out = list(errors)
    for p in passes:
        if p.kind == "appraiser" and p.sign:
            out.append(
                GoalError(None, Channel.appraisal, p.sign, Agency(p.agency), p.visible,
                          "appraiser", "appraiser")
            )  # fmt: skip
    return out


def goal_errors(
    facts: Facts,
    charter: Charter,
    now: datetime,
    table: Mapping[str, Contribution] = CONTRIBUTIONS,
) -> list[GoalError]:
    """Every signed outcome of the facts, in a stable order (feedback, reports, evals, runs,
    the runtime's items), with the paid passes' numbers joined in."""
    errors: list[GoalError] = []
    for feedback in facts.feedback:
        errors += of_feedback(feedback, charter, table)
    for report in facts.reports:
        errors += of_report(report, charter, table, now)
    for run in facts.evals:
        errors += of_eval(run, charter, table)
    for completed in facts.runs:
        errors += of_run(completed, charter, table)
    errors += of_runtime(facts.runs, facts.owner_outcomes, charter, table)
    return with_passes(errors, facts.passes)


def cut_short(facts: Facts) -> bool:
    """SPEC M45: a run the owner accepted with work cut off (a stop or silent failure)."""
    return any(
        run.counters is not None
        and any(run.counters.model_dump(by_alias=True).get(name) for name in CUT_SHORT)
        for run in facts.runs
        if not run.development
    )
