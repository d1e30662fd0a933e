"""Signed outcomes (GoalError) derived from recorded facts by one table (SPEC M22–M34).

A GoalError says: toward which goal (or none, M06), on which channel, how much and which way
(``sign``), who caused it (``agency``), whether it reached somebody (``visible``, computed,
M25), whether a counterfactual found it avoidable (``controllable``: unset until a replay
fills it, M26; none is made here, decisions D153), and ``cite`` — always an id or a counter
name, never prose (M27).

``CONTRIBUTIONS`` is the one place that says what each recorded outcome is worth; it is
rendered into the README (``contribution_rows``). The derivation takes the table as a
parameter, so a changed table reads over the whole history at once.
"""

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from contracts.goals import GoalKind, GoalRef
from contracts.runtime_facts import DraftStatus
from services.appraisal.charter import Charter
from services.appraisal.facts import EvalRunFact, FeedbackFact, ReportFact, RunFact
from services.appraisal.setpoints import SensorKind, Store


class Channel(StrEnum):
    """SPEC M23."""

    intervention = "intervention"
    edit = "edit"
    counter = "counter"
    setpoint = "setpoint"
    commitment = "commitment"
    appraisal = "appraisal"


class Agency(StrEnum):
    """SPEC M24: who caused it."""

    self = "self"
    owner = "owner"
    other = "other"
    world = "world"


@dataclass(frozen=True)
class Contribution:
    channel: Channel
    sign: float
    agency: Agency
    delivery: bool = False  # a positive delivery: the only positive that can read pride (M38)
    note: str = ""


C, A = Channel, Agency
# The contribution table, SPEC M28–M34 as this service records them (decisions D37). Keyed by
# the outcome's name; an outcome absent from the table contributes nothing (M29, M30).
CONTRIBUTIONS: Mapping[str, Contribution] = {
    "reply-accepted": Contribution(C.edit, +1.0, A.self, True, "a rating of 5 on the run"),
    "correction": Contribution(C.edit, -1.0, A.owner, note="a person corrected the reply"),
    "low-rating": Contribution(C.edit, -1.0, A.owner, note="a rating of 1 or 2"),
    "escalation": Contribution(C.intervention, -1.0, A.owner, note="a person stepped in"),
    "draft-sent-unchanged": Contribution(C.edit, +1.0, A.self, True, "the text reached them"),
    "draft-sent-edited": Contribution(C.edit, -1.0, A.owner, note="a verdict, not proof"),
    "draft-rejected": Contribution(C.edit, -1.0, A.owner, note="a verdict, not proof"),
    "question-answered": Contribution(C.commitment, +0.5, A.self, True, "and the run completed"),
    "question-abandoned": Contribution(C.commitment, -0.5, A.owner),
    "owner-stop-redirect": Contribution(C.intervention, -0.5, A.owner, note="re-prompted"),
    "owner-stop-abandoned": Contribution(C.intervention, -0.5, A.owner, note="never resumed"),
    "owner-error_exposed": Contribution(C.commitment, -1.0, A.self, note="replaces the draft's"),
    "owner-harm": Contribution(C.commitment, -1.0, A.self, note="replaces the draft's"),
    "owner-expectation_missed": Contribution(C.commitment, -1.0, A.self, note="replaces it"),
    "report-not-found": Contribution(C.counter, -1.0, A.self, note="wrong-answer report"),
    "report-fabricated": Contribution(C.counter, -1.0, A.self, note="wrong-answer report"),
    "report-retrieval": Contribution(C.counter, -1.0, A.world, note="the search failed it"),
    "report-no-access": Contribution(C.counter, -1.0, A.owner, note="the asker lacks a grant"),
    "report-outdated": Contribution(C.counter, -1.0, A.world, note="the source moved on"),
    "report-other": Contribution(C.counter, -1.0, A.self, note="any other or no kind"),
    "report-resolved-with-change": Contribution(C.commitment, +0.5, A.self),
    "report-left-open": Contribution(C.commitment, -0.5, A.owner, note="open past request_closure"),
    "eval-invented": Contribution(C.counter, -1.0, A.self, note="not-invented failed"),
    "eval-failed": Contribution(C.counter, -0.5, A.self, note="failed, nothing invented"),
    "eval-passed": Contribution(C.counter, +0.5, A.self),
    "loopStops": Contribution(C.counter, -1.0, A.self, note="RunCompleted counter"),
    "emptyOutputs": Contribution(C.counter, -1.0, A.self, note="RunCompleted counter"),
    "failedFinalCalls": Contribution(C.counter, -1.0, A.self, note="RunCompleted counter"),
    "ceilingHits": Contribution(C.counter, -0.5, A.owner, note="RunCompleted counter"),
    "boredomNotices": Contribution(C.counter, -0.5, A.self, note="RunCompleted counter"),
    "ownerBacklogDecrease": Contribution(C.counter, +0.5, A.self, note="a queue change: no pride"),
    "request-closed-without-draft": Contribution(
        C.commitment, -0.5, A.owner, note="with a draft: the draft's row instead"
    ),
}
# stepNulls is a health counter (M50), not a row: the seed's table has none (decisions D154).
RUN_COUNTERS = (
    "loopStops", "emptyOutputs", "failedFinalCalls", "ceilingHits", "boredomNotices",
    "ownerBacklogDecrease",
)  # fmt: skip
# A run cut short (SPEC M45's cut_short): a negative counter naming the stop or silent failure.
CUT_SHORT = ("loopStops", "emptyOutputs", "failedFinalCalls", "ceilingHits")
DRAFT_OUTCOMES = {
    DraftStatus.sent_unchanged: "draft-sent-unchanged",
    DraftStatus.sent_edited: "draft-sent-edited",
    DraftStatus.rejected: "draft-rejected",
}  # pending: no verdict yet (M30)
TOP_RATING, LOW_RATING = 5, 2
REPORT_KINDS = ("not-found", "fabricated", "retrieval", "no-access", "outdated")


@dataclass(frozen=True)
class GoalError:
    """SPEC M22: one signed outcome; ``outcome`` names its row of the table."""

    goal: GoalRef | None
    channel: Channel
    sign: float
    agency: Agency
    visible: bool
    cite: str
    outcome: str
    controllable: bool | None = None  # M26: unset until a replay fills it (D153)
    delivery: bool = False


def goal_of(serves: tuple[GoalRef, ...], charter: Charter, store: Store | None) -> GoalRef | None:
    """The goal an outcome counts against: its own first reference that counts (a
    ``charter:`` one only if the line exists, M19); else the highest-ranked line whose
    sensor watches the store it touched (M18); else none (M06)."""
    for ref in serves:
        if ref.kind is not GoalKind.charter or charter.line(ref.id) is not None:
            return ref
    line = charter.watching(store) if store is not None else None
    return GoalRef(GoalKind.charter, line.id) if line is not None else None


def signed(
    table: Mapping[str, Contribution],
    outcome: str,
    *,
    goal: GoalRef | None,
    visible: bool,
    cite: str,
) -> Iterator[GoalError]:
    row = table.get(outcome)
    if row is None:
        return  # M29: not in the table, contributes nothing
    yield GoalError(
        goal, row.channel, row.sign, row.agency, visible, cite, outcome, None, row.delivery
    )


def of_feedback(
    fact: FeedbackFact, charter: Charter, table: Mapping[str, Contribution]
) -> Iterator[GoalError]:
    """Feedback is the owner's channel: whoever corrects, rates or steps in reviews the
    agent's work, so the error did not reach somebody outside through it (visible False);
    exposure is computed where a reply is known to have reached its asker (a report)."""
    store = Store.interventions if fact.kind in ("correction", "escalation") else None
    goal = goal_of(fact.serves, charter, store)
    outcome = {"correction": "correction", "escalation": "escalation"}.get(fact.kind)
    if fact.kind == "rating" and fact.rating is not None:
        if fact.rating >= TOP_RATING:
            outcome = "reply-accepted"
        elif fact.rating <= LOW_RATING:
            outcome = "low-rating"
    if outcome is not None:  # a comment, or a middling rating, says nothing signed
        yield from signed(table, outcome, goal=goal, visible=False, cite=fact.feedback_id)


def of_report(
    fact: ReportFact,
    charter: Charter,
    table: Mapping[str, Contribution],
    now: datetime,
) -> Iterator[GoalError]:
    goal = goal_of(fact.serves, charter, Store.requests)
    kind = fact.kind if fact.kind in REPORT_KINDS else "other"
    cite = fact.report_id
    yield from signed(table, f"report-{kind}", goal=goal, visible=fact.reached_reporter, cite=cite)
    if fact.resolved_with_change:
        yield from signed(table, "report-resolved-with-change", goal=goal, visible=True, cite=cite)
    line = charter.sensing(SensorKind.request_closure)
    if fact.status == "New" and line is not None and line.sensor is not None:
        waited = (now - fact.submitted_at).total_seconds()
        if waited > line.sensor.setpoint.value:  # missed against that line's own setpoint
            missed = goal_of(fact.serves, charter, None) or GoalRef(GoalKind.charter, line.id)
            yield from signed(table, "report-left-open", goal=missed, visible=True, cite=cite)


def of_eval(
    fact: EvalRunFact, charter: Charter, table: Mapping[str, Contribution]
) -> Iterator[GoalError]:
    """An eval reply reaches nobody: never visible."""
    goal = goal_of((), charter, Store.evals)
    outcome = "eval-passed" if fact.passed else "eval-invented" if fact.invented else "eval-failed"
    yield from signed(table, outcome, goal=goal, visible=False, cite=fact.run_id)


def of_run(
    fact: RunFact, charter: Charter, table: Mapping[str, Contribution]
) -> Iterator[GoalError]:
    """SPEC M28 from RunCompleted's counters; a counter not measured contributes nothing
    (unknown, M49); development runs are not appraised (M54)."""
    if fact.development or fact.counters is None:
        return
    goal = goal_of(fact.serves, charter, None)
    counted = fact.counters.model_dump(by_alias=True)
    for name in RUN_COUNTERS:
        if counted.get(name):
            yield from signed(table, name, goal=goal, visible=False, cite=name)


def contribution_rows(table: Mapping[str, Contribution] = CONTRIBUTIONS) -> str:
    """The table as Markdown, for the README (a test keeps the two the same)."""
    rows = ["| outcome | channel | sign | agency | pride? | note |", "|---|---|---|---|---|---|"]
    for name, row in table.items():
        delivery = "yes" if row.delivery else ""
        rows.append(
            f"| `{name}` | {row.channel.value} | {row.sign:+.1f} | {row.agency.value} "
            f"| {delivery} | {row.note} |"
        )
    return "\n".join(rows)
