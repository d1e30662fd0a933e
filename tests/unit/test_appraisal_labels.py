"""Labels and valence (SPEC M35–M44): table tests over every branch, a property test that the
two sums never net, and an enumeration of every label over the finite input space, derived
from the code: the free readout reaches neutral, distress and pride only (M42); regret and
disappointment come only through a probe, anger and embarrassment only through the appraiser;
guilt, shame and excitement are kept for later and reached by nothing."""

import itertools
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contracts.goals import GoalKind, GoalRef
from contracts.neighbours import RunCounters
from contracts.runtime_facts import (
    DraftStatus,
    OwnerStop,
    OwnerVerdict,
    QuestionStatus,
    RunDraft,
    RunQuestion,
    RunRequest,
)
from services.appraisal.charter import Charter, parse_charter
from services.appraisal.derivation import goal_errors
from services.appraisal.facts import (
    EvalRunFact,
    Facts,
    FeedbackFact,
    OwnerOutcomeFact,
    PassFact,
    ReportFact,
    RunFact,
)
from services.appraisal.labels import FREE, UNREACHABLE, Label, frustrated, label, valence
from services.appraisal.outcomes import REPORT_KINDS, Agency, Channel, GoalError

CHARTER = parse_charter(
    '[[line]]\nid = "grounded"\ntext = "Answers are grounded."\n'
    '[[line]]\nid = "inbox"\ntext = "Reports do not wait."\n'
    'sensor = { kind = "request_closure", setpoint = "1d" }\n'
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
    channel: Channel = Channel.edit,
) -> GoalError:
    return GoalError(goal, channel, sign, agency, visible, "id-1", outcome, controllable, delivery)


def opinion(sign: float = -1.0, agency: Agency = Agency.self, visible: bool = False) -> GoalError:
    """The quarantined appraiser's one signed error (a paid pass, channel appraisal)."""
    return err(sign, agency, visible, outcome="appraiser", channel=Channel.appraisal)


@pytest.mark.parametrize(
    ("errors", "expected"),
    [
        ([], Label.neutral),  # nothing signed
        ([err(+0.5)], Label.neutral),  # a positive that is no delivery (M38)
        ([err(+1.0, delivery=True)], Label.neutral),  # a delivery against no goal
        ([err(+1.0, delivery=True, goal=TASK)], Label.neutral),  # against no charter line
        ([err(+1.0, delivery=True, goal=GONE)], Label.neutral),  # M19: the line is gone
        ([err(+1.0, delivery=True, goal=KNOWN)], Label.pride),  # M38
        ([opinion(+1.0)], Label.neutral),  # M38: an appraiser's positive opinion is no pride
        ([err(-1.0)], Label.distress),  # M37
        # M42: the free readout names every negative distress, whoever caused it and
        # whether it reached somebody: agency and exposure are the paid appraiser's to read.
        ([err(-1.0, visible=True)], Label.distress),
        ([err(-1.0, Agency.owner, True)], Label.distress),
        ([err(-1.0, Agency.world, True)], Label.distress),
        ([err(-1.0, Agency.other)], Label.distress),
        ([opinion(-1.0, visible=True)], Label.embarrassment),  # M37: reached somebody
        ([opinion(-1.0, Agency.world, True)], Label.anger),  # M36: agency before exposure
        ([opinion(-1.0, Agency.other)], Label.anger),
        ([opinion(-1.0, Agency.owner)], Label.distress),
        ([err(-1.0, controllable=True)], Label.regret),  # M44: mattered
        ([err(-1.0, controllable=False)], Label.disappointment),  # M44: redundant
        ([err(-1.0, Agency.world, controllable=True)], Label.regret),  # the probe's word
        ([err(-1.0), opinion(-0.5, Agency.world)], Label.distress),  # M39: most negative
        ([err(-0.5), opinion(-1.0, Agency.world)], Label.anger),
        ([err(-1.0), opinion(-1.0, visible=True)], Label.embarrassment),  # M39: says more
        ([opinion(-1.0, visible=True), err(-1.0, controllable=False)], Label.disappointment),
        ([err(-1.0, goal=TASK, controllable=c) for c in (True, False)], Label.regret),
        ([err(-1.0, goal=TASK, controllable=None)] * 2, Label.distress),  # not probe-resolved
        ([err(-0.5), err(-1.0, goal=TASK, controllable=False, outcome="a"),
          err(-1.0, goal=TASK, controllable=True, outcome="b")], Label.regret),
        ([err(-1.0, goal=TASK, controllable=False)] * 2,
         Label.disappointment),  # frustration never displaces a name that says more
        ([err(-1.0, goal=TASK), err(-1.0, goal=TASK), opinion(-1.0)], Label.distress),
        ([err(-1.0), err(-1.0)], Label.distress),  # no goal named: not frustration
        ([err(-1.0, Agency.owner, goal=TASK, controllable=True)] * 2,
         Label.regret),  # not self-caused: no frustration
        ([err(+1.0, delivery=True, goal=KNOWN), err(-1.0)], Label.distress),  # M40
    ],
)  # fmt: skip
def test_the_label_of_a_record(errors: list[GoalError], expected: Label) -> None:
    assert label(errors, CHARTER) is expected


def test_frustration_is_two_probe_resolved_self_errors_of_one_kind_on_one_goal() -> None:
    """SPEC M39: it needs a probe's answer on both, and says less than regret or
    disappointment, so it shows only beside a name that says less: here the appraiser's
    distress is the most negative, and frustration displaces it."""
    probed = err(-0.5, goal=TASK, controllable=True, outcome="loop")
    assert label([probed, probed, opinion(-1.0)], CHARTER) is Label.frustration
    assert label([probed, probed], CHARTER) is Label.regret
    assert frustrated([probed, probed])
    assert not frustrated([replace(probed, controllable=None)] * 2)


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


def recorded_facts(serves: tuple[GoalRef, ...]) -> Facts:
    """Every kind of recorded fact the derivation reads, in each state, for one goal shape."""
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
        if not name.startswith("oldest_")  # instants: no sign of their own
        for one in ((1, 0) if name not in ("goal_anchor", "goal_put_to_owner",
                                           "goal_confirmed") else (True,))
    ]  # fmt: skip
    runtime = [
        RunFact(f"rt-{i}", "a", NOW + timedelta(seconds=i), False, RunCounters(), serves, ok,
                drafts=(RunDraft(draft_id=f"d-{i}", status=d),),
                questions=(RunQuestion(question_id=f"q-{i}", status=q),),
                stops=(OwnerStop(stop_id=f"s-{i}", resumed=resumed),))
        for i, (d, q, resumed, ok) in enumerate(itertools.product(
            DraftStatus, QuestionStatus, (True, False), (True, False)))
    ]  # fmt: skip
    requests = [  # M28: a triaged request, closed or not, with a draft or without
        RunFact(f"rq-{i}", "a", NOW, False, RunCounters(), serves,
                requests=(RunRequest(request_id=f"rq-{i}", closed=closed, draft_id=draft),))
        for i, (closed, draft) in enumerate(itertools.product((True, False), (None, "d-0")))
    ]  # fmt: skip
    outcomes = [
        OwnerOutcomeFact(f"o-{i}", f"rt-{i}", f"d-{i}", verdict)
        for i, verdict in enumerate(v for v in OwnerVerdict if v is not OwnerVerdict.withdrawn)
    ]
    return Facts(tuple(feedback), tuple(reports), tuple(evals), (*runs, *runtime, *requests),
                 tuple(outcomes))  # fmt: skip


def reachable_errors(*, paid: bool = False) -> set[GoalError]:
    """Every signed outcome the derivation produces from recorded facts; with ``paid``, also
    with every intervention opinion (and older ``probe`` record) on every error and every
    appraiser verdict joined in."""
    found: set[GoalError] = set()
    for charter in (Charter(), CHARTER):
        for serves in [(), (KNOWN,), (GONE,), (TASK,)]:
            facts = recorded_facts(serves)
            free = goal_errors(facts, charter, NOW)
            found |= set(free)
            if not paid:
                continue
            for result in ("mattered", "redundant", "inconclusive", "skipped"):
                for kind in ("opinion", "probe"):
                    asked = [PassFact("r", kind, e.cite, result) for e in free]
                    found |= set(goal_errors(replace(facts, passes=tuple(asked)), charter, NOW))
            for agency, visible in itertools.product(Agency, (True, False)):
                said = (PassFact("r", "appraiser", "appraiser", "found", -0.5, agency, visible),)
                found |= set(goal_errors(replace(facts, passes=said), charter, NOW))
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
    """The whole finite space the label function reads (sign, agency, exposure, goal, a
    probe's answer, delivery, the appraiser's channel), paid passes included."""
    return {
        err(sign, agency, visible, goal=goal, controllable=probe, delivery=delivery,
            channel=channel)
        for sign in (-1.0, -0.5, +0.5, +1.0)
        for agency in Agency
        for visible in (True, False)
        for goal in (None, KNOWN, TASK)
        for probe in (None, True, False)
        for delivery in ((False, True) if sign > 0 else (False,))
        for channel in (Channel.edit, Channel.appraisal)
    }  # fmt: skip


def test_every_label_but_the_three_kept_for_later_is_reachable() -> None:
    over_everything = labels_over(every_input())
    assert set(Label) - set(over_everything) == UNREACHABLE == {
        Label.guilt, Label.shame, Label.excitement,
    }  # fmt: skip


def test_the_free_readout_reaches_only_neutral_distress_and_pride() -> None:  # M42
    free = labels_over(reachable_errors())
    assert set(free) == FREE == {Label.neutral, Label.distress, Label.pride}
    assert free[Label.pride][0].delivery


def test_the_paid_passes_run_here_add_anger_and_embarrassment_never_a_probe_s_word() -> None:
    """M42, M44, D153: an intervention opinion is asked without a replay, so it fills no
    ``controllable`` and flips no label: regret, disappointment and frustration stay out of
    reach of every recorded fact; the appraiser's error reaches anger and embarrassment."""
    errors = reachable_errors(paid=True)
    paid = labels_over(errors)
    assert all(e.controllable is None for e in errors)
    assert set(Label) - set(paid) == UNREACHABLE | {
        Label.regret, Label.disappointment, Label.frustration,
    }  # fmt: skip
    for name in (Label.anger, Label.embarrassment):
        assert any(e.channel is Channel.appraisal for e in paid[name])
    for name, record in paid.items():
        assert label(record, CHARTER) is name


def test_a_replayed_counterfactual_would_split_distress_as_m44_says() -> None:
    """M44's mapping stays in the label function for a ``controllable`` a replay fills
    (none is made here, D153): mattered → regret, redundant → disappointment, two resolved
    self errors of one kind on one goal beside a worse distress → frustration (M39)."""
    errors = reachable_errors()
    negative = next(e for e in errors if e.agency is Agency.self and e.goal and not e.visible
                    and -1.0 < e.sign < 0)  # fmt: skip
    assert label([replace(negative, controllable=True)], CHARTER) is Label.regret
    assert label([replace(negative, controllable=False)], CHARTER) is Label.disappointment
    resolved = replace(negative, controllable=True)
    worse = replace(negative, sign=-1.0, channel=Channel.appraisal, outcome="appraiser")
    assert label([resolved, resolved, worse], CHARTER) is Label.frustration


# What reaches each label on its own in the free readout, as the exploration above finds it;
# a change to the table or the function that moves an outcome shows up here.
ALONE_FREE = {
    Label.distress: {
        "boredomNotices", "ceilingHits", "correction", "draft-rejected", "draft-sent-edited",
        "emptyOutputs", "escalation", "eval-failed", "eval-invented", "failedFinalCalls",
        "loopStops", "low-rating", "owner-error_exposed", "owner-expectation_missed",
        "owner-harm", "owner-stop-abandoned", "owner-stop-redirect", "question-abandoned",
        "report-fabricated", "report-left-open", "report-no-access", "report-not-found",
        "report-other", "report-outdated", "report-retrieval", "request-closed-without-draft",
    },  # stepNulls is a health counter, no row (D154)
    Label.neutral: {  # M28, M38: a backlog decrease is no delivery, so never pride
        "draft-sent-unchanged", "eval-passed", "ownerBacklogDecrease", "question-answered",
        "reply-accepted", "report-resolved-with-change",
    },
    Label.pride: {"draft-sent-unchanged", "question-answered", "reply-accepted"},
}  # fmt: skip


def test_which_outcomes_reach_each_label_in_the_free_readout() -> None:
    alone: dict[Label, set[str]] = {}
    for error in reachable_errors():
        alone.setdefault(label([error], CHARTER), set()).add(error.outcome)
    assert alone == ALONE_FREE
