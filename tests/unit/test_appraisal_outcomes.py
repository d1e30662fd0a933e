"""Signed outcomes from recorded facts (SPEC M22–M34) and health shares (M47–M51, M54)."""

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from contracts.goals import GoalKind, GoalRef
from contracts.neighbours import RunCounters
from services.appraisal.charter import Charter, parse_charter
from services.appraisal.derivation import goal_errors
from services.appraisal.facts import EvalRunFact, Facts, FeedbackFact, ReportFact, RunFact
from services.appraisal.health import health
from services.appraisal.outcomes import CONTRIBUTIONS, Agency, Channel, contribution_rows
from services.appraisal.weekly import reports_only_line
from services.digests.build import ReportFact as DigestReport
from services.digests.build import as_text, build

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
CHARTER = parse_charter(
    '[[line]]\nid = "grounded"\ntext = "Answers are grounded."\n'
    '[[line]]\nid = "inbox"\ntext = "Reports do not wait."\n'
    'sensor = { kind = "request_closure", setpoint = "1d" }\n'
    '[[line]]\nid = "queue"\ntext = "The queue stays short."\n'
    'sensor = { kind = "outbox_waiting", setpoint = 5 }\n'
)


def report(kind: str | None, *, reached: bool = True, status: str = "Triaged",
           age: timedelta = timedelta(0), change: bool = False,
           serves: tuple[GoalRef, ...] = ()) -> ReportFact:  # fmt: skip
    return ReportFact("rep-1", "run-1", "agent/a", kind, reached, NOW - age, status, change, serves)


NO_CHARTER = Charter()


def one(
    facts: Facts, charter: Charter = NO_CHARTER
) -> list[tuple[str, Channel, float, Agency, bool, str]]:
    return [(e.outcome, e.channel, e.sign, e.agency, e.visible, e.cite)
            for e in goal_errors(facts, charter, NOW)]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "rating", "expected"),
    [
        ("correction", None, [("correction", Channel.edit, -1.0, Agency.owner, False, "fb-1")]),
        ("rating", 5, [("reply-accepted", Channel.edit, 1.0, Agency.self, False, "fb-1")]),
        ("rating", 1, [("low-rating", Channel.edit, -1.0, Agency.owner, False, "fb-1")]),
        ("rating", 3, []),  # middling: nothing signed
        ("comment", None, []),
        ("escalation", None,
         [("escalation", Channel.intervention, -1.0, Agency.owner, False, "fb-1")]),
    ],
)  # fmt: skip
def test_feedback_contributes_per_the_table(
    kind: str, rating: int | None, expected: list[object]
) -> None:
    assert one(Facts(feedback=(FeedbackFact("fb-1", "run-1", kind, rating, NOW),))) == expected


@pytest.mark.parametrize(
    ("kind", "agency"),
    [("not-found", Agency.self), ("fabricated", Agency.self), ("retrieval", Agency.world),
     ("no-access", Agency.owner)],
)  # fmt: skip
def test_a_report_is_a_counter_with_agency_by_kind(kind: str, agency: Agency) -> None:
    assert one(Facts(reports=(report(kind),))) == [
        (f"report-{kind}", Channel.counter, -1.0, agency, True, "rep-1")
    ]


def test_a_report_is_visible_only_when_the_reply_reached_the_reporter() -> None:  # M25
    assert one(Facts(reports=(report("fabricated", reached=False),)))[0][4] is False


def test_a_report_resolved_with_a_change_is_a_kept_commitment() -> None:
    outcomes = one(Facts(reports=(report("not-found", status="Resolved", change=True),)))
    assert (
        "report-resolved-with-change",
        Channel.commitment,
        0.5,
        Agency.self,
        True,
        "rep-1",
    ) in outcomes


def test_a_report_left_new_past_the_request_closure_setpoint_is_a_missed_commitment() -> None:
    late = report("not-found", status="New", age=timedelta(days=2))
    early = report("not-found", status="New", age=timedelta(hours=2))
    errors = goal_errors(Facts(reports=(late,)), CHARTER, NOW)
    missed = [e for e in errors if e.outcome == "report-left-open"]
    assert missed
    assert missed[0].sign == -0.5
    assert missed[0].goal == GoalRef(GoalKind.charter, "inbox")
    assert not [
        e
        for e in goal_errors(Facts(reports=(early,)), CHARTER, NOW)
        if e.outcome == "report-left-open"
    ]
    # without an request_closure line there is no setpoint to be past
    assert "report-left-open" not in [o[0] for o in one(Facts(reports=(late,)))]


def test_an_outcome_without_a_goal_goes_to_the_line_watching_its_store() -> None:  # M18
    errors = goal_errors(Facts(reports=(report("not-found"),)), CHARTER, NOW)
    # M18: the highest-ranked line watching the reports (request_closure)
    assert errors[0].goal == GoalRef(GoalKind.charter, "inbox")
    own = goal_errors(
        Facts(reports=(report("not-found", serves=(GoalRef(GoalKind.task, "t"),)),)), CHARTER, NOW
    )
    assert own[0].goal == GoalRef(GoalKind.task, "t")  # its own goal first
    gone = goal_errors(
        Facts(reports=(report("x", serves=(GoalRef(GoalKind.charter, "gone"),)),)), CHARTER, NOW
    )
    assert gone[0].goal == GoalRef(GoalKind.charter, "inbox")  # M19: a missing line does not count


@pytest.mark.parametrize(
    ("passed", "invented", "outcome", "sign"),
    [(True, False, "eval-passed", 0.5), (False, True, "eval-invented", -1.0),
     (False, False, "eval-failed", -0.5)],
)  # fmt: skip
def test_an_eval_run_is_a_counter_never_visible(
    passed: bool, invented: bool, outcome: str, sign: float
) -> None:
    assert one(Facts(evals=(EvalRunFact("ev-1", "a", passed, invented, NOW),))) == [
        (outcome, Channel.counter, sign, Agency.self, False, "ev-1")
    ]


def test_run_counters_contribute_by_counter_name() -> None:  # M28, M27: cite is the name
    counters = RunCounters(loopStops=2, emptyOutputs=0, ceilingHits=1, stepNulls=None)
    outcomes = one(Facts(runs=(RunFact("run-1", "a", NOW, False, counters),)))
    assert outcomes == [
        ("loopStops", Channel.counter, -1.0, Agency.self, False, "loopStops"),
        ("ceilingHits", Channel.counter, -0.5, Agency.owner, False, "ceilingHits"),
    ]


def test_the_seed_s_rows_boredom_and_backlog_are_counted_and_null_steps_are_not() -> None:
    """M28 (D154): a boredom notice −0.5 (beside the ceilings, the model's own), a recorded
    owner backlog decrease +0.5 (no delivery: it never reads pride, M38); null steps are a
    health counter (M50) the seed's table has no row for."""
    counters = RunCounters(boredomNotices=1, ownerBacklogDecrease=3, stepNulls=2)
    outcomes = one(Facts(runs=(RunFact("run-1", "a", NOW, False, counters),)))
    assert outcomes == [
        ("boredomNotices", Channel.counter, -0.5, Agency.self, False, "boredomNotices"),
        ("ownerBacklogDecrease", Channel.counter, 0.5, Agency.self, False,
         "ownerBacklogDecrease"),
    ]  # fmt: skip
    assert "stepNulls" not in CONTRIBUTIONS
    assert not CONTRIBUTIONS["ownerBacklogDecrease"].delivery


def test_development_runs_and_unmeasured_runs_contribute_nothing() -> None:  # M54, M49
    counters = RunCounters(loopStops=2)
    assert one(Facts(runs=(RunFact("r", "a", NOW, True, counters), RunFact("s", "a", NOW)))) == []


def test_the_table_can_be_swapped_without_touching_the_facts() -> None:
    facts = Facts(feedback=(FeedbackFact("fb-1", "run-1", "correction", None, NOW),))
    table = {
        **CONTRIBUTIONS,
        "correction": CONTRIBUTIONS["correction"].__class__(Channel.edit, -2.0, Agency.self),
    }
    assert [e.sign for e in goal_errors(facts, Charter(), NOW, table)] == [-2.0]


def test_the_appraisal_page_shows_the_table_as_the_code_has_it() -> None:
    page = Path("docs/appraisal.md").read_text(encoding="utf-8")
    assert contribution_rows() in page


def run(**counters: object) -> RunFact:
    return RunFact("r", "a", NOW, False, RunCounters.model_validate(counters))


def test_health_shares_carry_numerators_denominators_and_unknowns() -> None:  # M48–M51
    runs = [
        run(goalAnchor=True, goalPlanWrites=3, goalDriftWrites=1, stepMeasured=2, stepNulls=1,
            stepCompletions=2, stepReopens=0),
        run(goalAnchor=True, goalPlanWrites=2, goalDriftWrites=0, stepMeasured=1, stepNulls=0,
            stepCompletions=1, stepReopens=1),
        run(goalAnchor=True, goalPlanWrites=1, goalUnnamedWrites=1, stepMeasured=0,
            stepCompletions=0, stepReopens=0),
        RunFact("old", "a", NOW),  # an old record: unknown, not clean (M49)
        RunFact("dev", "a", NOW, True,
                RunCounters(goalAnchor=True, goalPlanWrites=1, goalDriftWrites=1)),
    ]  # fmt: skip
    shown = health(runs).as_json()
    assert shown["runs"] == 4
    assert shown["developmentExcluded"] == 1
    assert shown["goalDrift"] == {"rate": 0.5, "runs": 1, "eligible": 2, "unknown": 1}
    assert shown["namedNothing"] == 1
    assert shown["stepNulls"] == {"rate": 0.5, "runs": 1, "eligible": 2, "unknown": 1}
    assert shown["stepReopens"] == {"rate": 0.5, "runs": 1, "eligible": 2, "unknown": 1}


def test_no_eligible_run_has_no_rate_not_zero() -> None:  # M49
    assert health([RunFact("old", "a", NOW)]).as_json()["stepNulls"] == {
        "rate": None,
        "runs": 0,
        "eligible": 0,
        "unknown": 1,
    }


def test_the_digest_reads_its_week_s_reports_with_the_appraisal_s_own_functions() -> None:
    week, monday = "2026-W47", datetime(2026, 11, 16, 9, tzinfo=UTC)
    reports = [
        DigestReport(uuid.uuid4(), monday, kind, "coach", None)
        for kind in ("not-found", "fabricated", "retrieval")
    ]
    text = as_text(
        build(week, reports, [], bound=10).agents[0],
        week,
        truncated=False,
        appraise=reports_only_line,
    )
    # the weekly line is a free readout: every negative is distress, whoever caused it (M42)
    assert text.splitlines()[-1] == "Appraisal (from reports only): distress, \u22123.0"
