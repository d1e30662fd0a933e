"""Labels and valence (SPEC M35–M44): table tests over every branch, a property test that the
two sums never net, and an enumeration of every label over the finite input space, derived
from the code (which labels the derivation can reach today and which it cannot)."""

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contracts.goals import GoalKind, GoalRef
from contracts.neighbours import RunCounters
from services.appraisal.charter import Charter, parse_charter
from services.appraisal.facts import EvalRunFact, Facts, FeedbackFact, ReportFact, RunFact
from services.appraisal.labels import Label, label, valence
from services.appraisal.outcomes import (
    CONTRIBUTIONS,
    REPORT_KINDS,
    Agency,
    Channel,
    GoalError,
    goal_errors,
)

CHARTER = parse_charter(
    '[[line]]\nid = "grounded"\ntext = "Answers are grounded."\n'
    '[[line]]\nid = "inbox"\ntext = "Reports do not wait."\n'
    'sensor = { kind = "inbox_age", setpoint = "1d" }\n'
)
KNOWN = GoalRef(GoalKind.charter, "grounded")
GONE = GoalRef(GoalKind.charter, "removed")
TASK = GoalRef(GoalKind.task, "T-1")
NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def err(
    sign: float = -1.0,
    agency: Agency = Agency.self,
    visible: bool = False,
    *,
    goal: GoalRef | None = None,
    outcome: str = "x",
    controllable: bool | None = None,
    delivery: bool = False,
) -> GoalError:
    return GoalError(
        goal, Channel.edit, sign, agency, visible, "id-1", outcome, controllable, delivery
    )


@pytest.mark.parametrize(
    ("errors", "expected"),
    [
        ([], Label.neutral),  # nothing signed
        ([err(+0.5)], Label.neutral),  # a positive that is no delivery (M38)
        ([err(+1.0, delivery=True)], Label.neutral),  # a delivery against no goal
        ([err(+1.0, delivery=True, goal=TASK)], Label.neutral),  # against no charter line
        ([err(+1.0, delivery=True, goal=GONE)], Label.neutral),  # M19: the line is gone
        ([err(+1.0, delivery=True, goal=KNOWN)], Label.pride),  # M38
        ([err(-1.0)], Label.distress),  # M37: reached nobody
        ([err(-1.0, visible=True)], Label.embarrassment),  # M37: reached somebody
        ([err(-1.0, Agency.owner, True)], Label.embarrassment),
        ([err(-1.0, Agency.world, True)], Label.anger),  # M36: agency before exposure
        ([err(-1.0, Agency.other)], Label.anger),
        ([err(-1.0, controllable=True)], Label.regret),  # M44: mattered
        ([err(-1.0, controllable=False)], Label.disappointment),  # M44: redundant
        ([err(-1.0, Agency.world, controllable=True)], Label.anger),  # probe refines self/owner
        ([err(-1.0), err(-0.5, Agency.world)], Label.distress),  # M39: most negative decides
        ([err(-0.5), err(-1.0, Agency.world)], Label.anger),
        ([err(-1.0), err(-1.0, visible=True)], Label.embarrassment),  # M39: tie → says more
        ([err(-1.0, visible=True), err(-1.0, Agency.world)], Label.anger),
        ([err(-1.0, goal=TASK), err(-1.0, goal=TASK)], Label.frustration),  # M39
        ([err(-1.0, goal=TASK, outcome="a"), err(-1.0, goal=TASK, outcome="b")], Label.distress),
        ([err(-1.0), err(-1.0)], Label.distress),  # no goal named: not frustration
        ([err(-1.0, Agency.owner, goal=TASK)] * 2, Label.distress),  # not self-caused
        ([err(-1.0, visible=True, goal=TASK)] * 2,
         Label.embarrassment),  # frustration never displaces a name that says more
        ([err(+1.0, delivery=True, goal=KNOWN), err(-1.0)], Label.distress),  # M40
    ],
)  # fmt: skip
def test_the_label_of_a_record(errors: list[GoalError], expected: Label) -> None:
    assert label(errors, CHARTER) is expected


def test_a_compacted_record_reads_neutral() -> None:  # M43
    assert label([err(-1.0, visible=True)], CHARTER, compacted=True) is Label.neutral


def test_valence_is_two_sums_never_netted() -> None:  # M41
    assert str(valence([err(+1.0), err(-1.0), err(-1.0)])) == "+1.0 \u22122.0"
    assert str(valence([])) == ""  # nothing signed shows nothing
    assert str(valence([err(-0.5)])) == "\u22120.5"


ERRORS = st.builds(
    err,
    sign=st.sampled_from([-1.0, -0.5, +0.5, +1.0]),
    agency=st.sampled_from(list(Agency)),
    visible=st.booleans(),
    goal=st.sampled_from([None, KNOWN, GONE, TASK]),
    outcome=st.sampled_from(["a", "b"]),
    controllable=st.sampled_from([None, True, False]),
    delivery=st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(ERRORS, max_size=8), ERRORS)
def test_one_sign_never_moves_the_other_sum(errors: list[GoalError], added: GoalError) -> None:
    before, after = valence(errors), valence([*errors, added])
    if added.sign > 0:  # M40, M41
        assert after.negative == before.negative
    else:
        assert after.positive == before.positive
    if added.sign > 0 and any(e.sign < 0 for e in errors):
        assert label([*errors, added], CHARTER) is label(errors, CHARTER)  # M40


# ---- Every label, and what reaches it: explored over the finite input space -----------------


def reachable_errors() -> set[GoalError]:
    """Every signed outcome the derivation can produce today, found by running it over a
    finite space of recorded facts (every kind, rating, report state, counter, goal shape)."""
    serves_options = [(), (KNOWN,), (GONE,), (TASK,)]
    found: set[GoalError] = set()
    for charter in (Charter(), CHARTER):
        for serves in serves_options:
            feedback = [
                FeedbackFact("f", "r", kind, rating, NOW, serves)
                for kind, rating in [("comment", None), ("correction", None),
                                     ("escalation", None)] + [("rating", n) for n in range(1, 6)]
            ]  # fmt: skip
            reports = [
                ReportFact("p", "r", "a", kind, reached, NOW - age, status, change, serves)
                for kind in (*REPORT_KINDS, "other", None)
                for reached in (True, False)
                for status in ("New", "Resolved")
                for change in (True, False)
                for age in (timedelta(0), timedelta(days=3))
            ]
            evals = [EvalRunFact("e", "a", p, i, NOW) for p in (True, False) for i in (True, False)]
            runs = [
                RunFact("r", "a", NOW, dev, RunCounters(**{name: one}), serves)
                for dev in (True, False)
                for name in RunCounters.model_fields
                for one in ((1, 0) if name != "goal_anchor" else (True,))
            ]
            facts = Facts(tuple(feedback), tuple(reports), tuple(evals), tuple(runs))
            found |= set(goal_errors(facts, charter, NOW))
    return found


def labels_over(errors: set[GoalError]) -> dict[Label, tuple[GoalError, ...]]:
    """Each label and the smallest record (one or two outcomes) found to reach it."""
    reached: dict[Label, tuple[GoalError, ...]] = {}
    ordered = sorted(errors, key=repr)
    for size in (1, 2):
        for record in itertools.combinations_with_replacement(ordered, size):
            reached.setdefault(label(record, CHARTER), record)
    return reached


def every_input() -> set[GoalError]:
    """The whole finite space the label function reads, probes included."""
    return {
        err(row.sign, row.agency, visible, goal=goal, outcome=name, controllable=probe,
            delivery=row.delivery)
        for name, row in CONTRIBUTIONS.items()
        for visible in (True, False)
        for goal in (None, KNOWN, GONE, TASK)
        for probe in (None, True, False)
    }  # fmt: skip


def test_every_label_is_reachable_by_some_input_and_says_which_today() -> None:
    over_everything = labels_over(every_input())
    assert set(over_everything) == set(Label)  # no label is dead code

    today = labels_over(reachable_errors())
    unreachable = set(Label) - set(today)
    # No probe fills ``controllable`` yet (M26), so the two labels a probe gives are
    # unreachable today; everything else is reached by the derivation from real facts.
    assert unreachable == {Label.regret, Label.disappointment}
    for name, record in today.items():
        assert label(record, CHARTER) is name
    assert today[Label.pride][0].outcome == "reply-accepted"
    assert {e.outcome for e in today[Label.anger]} & {"report-retrieval", "report-outdated"}


# What reaches each label on its own today, as the exploration above finds it (visible or not);
# a change to the table or the function that moves an outcome shows up here.
ALONE_TODAY = {
    Label.anger: {"report-outdated", "report-retrieval"},
    Label.distress: {
        "ceilingHits", "correction", "emptyOutputs", "escalation", "eval-failed",
        "eval-invented", "failedFinalCalls", "loopStops", "low-rating", "report-fabricated",
        "report-no-access", "report-not-found", "report-other", "stepNulls",
    },
    Label.embarrassment: {
        "report-fabricated", "report-left-new", "report-no-access", "report-not-found",
        "report-other",
    },
    Label.neutral: {"eval-passed", "reply-accepted", "report-resolved-with-change"},
    Label.pride: {"reply-accepted"},  # only serving a line the charter has
}  # fmt: skip


def test_which_outcomes_reach_each_label_today() -> None:
    alone: dict[Label, set[str]] = {}
    for error in reachable_errors():
        alone.setdefault(label([error], CHARTER), set()).add(error.outcome)
    assert alone == ALONE_TODAY
    # frustration needs two: the same self-caused outcome twice on one named goal (M39)
    pairs = {
        record[0].outcome
        for record in itertools.combinations_with_replacement(
            sorted(reachable_errors(), key=repr), 2
        )
        if label(record, CHARTER) is Label.frustration
    }
    assert pairs
    assert all(CONTRIBUTIONS[name].agency is Agency.self for name in pairs)
