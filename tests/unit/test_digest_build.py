"""The weekly digest with given times: weeks at their edges, the pure build, posting once.

SPEC W104–W138 and §3.9. No clock is read: every time here is given.
"""

import json
from datetime import UTC, datetime, timedelta
from uuid import UUID, uuid4
from zoneinfo import ZoneInfo

import pytest

import contracts.digests
from contracts.digests import AgentTable, DigestPosted, DigestTables
from contracts.runners import RunnerKey
from contracts.weeks import due_at, end_of, last_completed, previous, start_of, week_of
from projections.inbox import UNKNOWN_AGENT
from services.appraisal.weekly import reports_only_line
from services.digests.build import (
    NO_KIND,
    UNKNOWN_MODEL,
    CaseFact,
    ReportFact,
    as_text,
    build,
)
from services.digests.domain import (
    NO_ROUTE,
    QUIET_WEEK,
    Digest,
    digest_id_for,
    previous_items,
)
from services.digests.published import POSTED
from services.kafka.publication import to_message

COACH = "AgenticOffice/Agent/OfficeCoach"
WRITER = "AgenticOffice/Agent/Writer"
WEEK = "2026-W47"  # Monday 2026-11-16 to Monday 2026-11-23
MONDAY = datetime(2026, 11, 16, tzinfo=UTC)


def report(
    at: datetime, kind: str | None = "not-found", agent: str = COACH, model: str | None = "m1"
) -> ReportFact:
    return ReportFact(uuid4(), at, kind, agent, model)


# Weeks -------------------------------------------------------------------------------------


def test_2026_has_a_week_53_due_monday_2027_01_04_at_six_not_a_second_earlier() -> None:
    """SPEC §3.9, W106: the last week of 2026 is W53 and is due the Monday after it."""
    assert week_of(datetime(2026, 12, 31, 12, tzinfo=UTC)) == "2026-W53"
    assert start_of("2026-W53") == datetime(2026, 12, 28, tzinfo=UTC)
    assert end_of("2026-W53") == datetime(2027, 1, 4, tzinfo=UTC)
    due = due_at("2026-W53")
    assert due == datetime(2027, 1, 4, 6, tzinfo=UTC)
    assert last_completed(due) == "2026-W53"
    assert last_completed(due - timedelta(seconds=1)) == "2026-W53"  # completed, not yet due


def test_a_report_at_sunday_23_59_59_is_in_the_week_and_one_at_monday_midnight_is_not() -> None:
    """SPEC §3.9: the window is [Monday 00:00 UTC, next Monday 00:00 UTC)."""
    sunday = datetime(2026, 11, 22, 23, 59, 59, tzinfo=UTC)
    next_monday = datetime(2026, 11, 23, 0, 0, 0, tzinfo=UTC)
    first_instant = MONDAY
    tables = build(WEEK, [report(sunday), report(next_monday), report(first_instant)], [],
                   bound=200)  # fmt: skip
    assert tables.reports == 2
    assert week_of(next_monday) == "2026-W48"
    # The same instant in another zone is the same week, read in UTC.
    zurich = sunday.astimezone(ZoneInfo("Europe/Zurich"))
    assert week_of(zurich) == WEEK


def test_the_previous_twelve_item_ids_are_spelled_across_a_year_end() -> None:
    """W129, W130: instance + feedbackPath, nearest week first, through 2026-W53."""
    ids = previous_items("urn:fl", "2027-W02", "Office_Coach")
    assert len(ids) == 12
    assert ids[0] == "urn:fl/_Digests/2027-W01/Office_Coach"
    assert ids[1] == "urn:fl/_Digests/2026-W53/Office_Coach"
    assert ids[2] == "urn:fl/_Digests/2026-W52/Office_Coach"
    assert ids[-1] == "urn:fl/_Digests/2026-W43/Office_Coach"
    assert previous("2026-W01", 1) == ["2025-W52"]  # 2025 has no week 53


# The pure build ----------------------------------------------------------------------------


NIGHT_PASSED = {RunnerKey("night", "carol"): True}
NIGHT_FAILED = {RunnerKey("night", "carol"): False}


def test_the_build_counts_per_agent_by_kind_with_models_trend_cases_and_health() -> None:
    """W115–W121: counts by kind, models seen, trend, cases lifted, health line, per model."""
    at = MONDAY + timedelta(days=2)
    this = [
        report(at, "not-found", COACH, "m1"),
        report(at, "fabricated", COACH, "m2"),
        report(at, "fabricated", COACH, "m2"),
        report(at, "retrieval", WRITER, "m1"),
    ]
    before = [report(MONDAY - timedelta(days=3), "other", COACH, "m1") for _ in range(5)]
    cases = [
        CaseFact("_Evals/coach/1", COACH, this[0].report_id, NIGHT_PASSED),  # lifted this week
        CaseFact("_Evals/coach/2", COACH, uuid4(), NIGHT_FAILED),  # an older one, run
        CaseFact("_Evals/coach/3", COACH, uuid4(), {}),  # never run
        CaseFact("_Evals/writer/1", WRITER, uuid4(), NIGHT_PASSED),
    ]
    tables = build(WEEK, [*this, *before], cases, bound=200)
    assert [a.agent for a in tables.agents] == [COACH, WRITER]
    coach, writer = tables.agents
    assert coach.counts == {"fabricated": 2, "not-found": 1}  # W116
    assert coach.total == 3
    assert coach.models == ["m1", "m2"]  # W117
    assert (coach.trend.previous, coach.trend.change) == (5, -2)  # W118
    assert coach.cases_lifted == ["_Evals/coach/1"]  # W119
    assert (coach.health.with_run, coach.health.passed) == (2, 1)  # W120
    assert coach.agent_id == "AgenticOffice_Agent_OfficeCoach"
    assert writer.informational == {"retrieval": 1}  # W135
    assert coach.informational == {}
    assert {m.model: m.counts for m in tables.models} == {  # W121: across agents
        "m1": {"not-found": 1, "retrieval": 1},
        "m2": {"fabricated": 2},
    }
    assert not tables.truncated


def test_a_report_without_a_labelled_block_counts_under_the_unknown_agent() -> None:
    """W122: never lost; no kind and no model are counted under names of their own."""
    tables = build(WEEK, [report(MONDAY, kind=None, agent=UNKNOWN_AGENT, model=None)], [],
                   bound=200)  # fmt: skip
    [unknown] = tables.agents
    assert unknown.agent == UNKNOWN_AGENT
    assert unknown.agent_id == "unknown-agent"
    assert unknown.counts == {NO_KIND: 1}
    assert [m.model for m in tables.models] == [UNKNOWN_MODEL]


def test_a_full_page_marks_the_digest_truncated_a_lower_bound() -> None:
    """W112: as many reports as the bound means there may be more."""
    reports = [report(MONDAY + timedelta(minutes=n)) for n in range(3)]
    assert build(WEEK, reports, [], bound=3).truncated
    assert not build(WEEK, reports, [], bound=4).truncated
    text = as_text(
        build(WEEK, reports, [], bound=3).agents[0],
        WEEK,
        truncated=True,
        appraise=reports_only_line,
    )
    assert "truncated" in text
    assert "lower bounds" in text


def test_the_build_is_pure_the_same_facts_give_the_same_tables() -> None:
    """W115: no clock, no order dependence."""
    reports = [report(MONDAY + timedelta(hours=n), kind=k) for n, k in enumerate("abcab")]
    assert build(WEEK, reports, [], bound=200) == build(WEEK, reports[::-1], [], bound=200)


def test_retrieval_is_marked_informational_in_the_text() -> None:
    """W135."""
    table = build(WEEK, [report(MONDAY, kind="retrieval")], [], bound=200).agents[0]
    assert "retrieval: 1 (informational" in as_text(
        table, WEEK, truncated=False, appraise=reports_only_line
    )


# Posting once ------------------------------------------------------------------------------


def built(reports: list[ReportFact]) -> Digest:
    tables = build(WEEK, reports, [], bound=200)
    digest = Digest.build(digest_id=digest_id_for("t1", WEEK), tenant_id="t1", tables=tables,
                          at=datetime(2026, 11, 23, 6, tzinfo=UTC))  # fmt: skip
    digest.collect_events()
    return digest


def test_a_digest_posts_one_event_per_agent_then_never_again() -> None:
    """W123–W126: one event per agent with the identity, the text, the JSON and the url."""
    digest = built([report(MONDAY), report(MONDAY, agent=WRITER)])
    at = datetime(2026, 11, 23, 6, tzinfo=UTC)
    digest.post(instance="urn:fl", url="/d", routes=["kafka:t"], at=at, appraise=reports_only_line)
    events = digest.collect_events()
    posts = [e for e in events if isinstance(e, Digest.AgentPosted)]
    assert [p.feedback_path for p in posts] == [
        "_Digests/2026-W47/AgenticOffice_Agent_OfficeCoach",
        "_Digests/2026-W47/AgenticOffice_Agent_Writer",
    ]
    [stamp] = [e for e in events if isinstance(e, Digest.Posted)]
    assert stamp.identities == [p.feedback_path for p in posts]
    assert stamp.routes == ["kafka:t"]
    assert AgentTable.model_validate_json(posts[0].extra_context).agent == COACH
    assert posts[0].message.startswith(f"Wrong answers — {COACH}, week {WEEK}: 1 report")
    assert posts[0].previous_items[0] == "urn:fl/_Digests/2026-W46/AgenticOffice_Agent_OfficeCoach"
    digest.post(instance="urn:fl", url="/d", routes=["kafka:t"], at=at, appraise=reports_only_line)
    assert digest.collect_events() == []  # W124: the stamp makes it once


def test_a_quiet_week_posts_nothing_but_is_stamped_saying_so() -> None:
    """W127."""
    digest = built([])
    digest.post(
        instance="urn:fl", url="/d", routes=["kafka:t"], at=MONDAY, appraise=reports_only_line
    )
    [stamp] = digest.collect_events()
    assert isinstance(stamp, Digest.Posted)
    assert (stamp.identities, stamp.note) == ([], QUIET_WEEK)


def test_with_no_route_the_digest_stands_and_says_so() -> None:
    """W128."""
    digest = built([report(MONDAY)])
    digest.post(instance="urn:fl", url="/d", routes=[], at=MONDAY, appraise=reports_only_line)
    [stamp] = digest.collect_events()
    assert isinstance(stamp, Digest.Posted)
    assert (stamp.routes, stamp.identities, stamp.note) == ([], [], NO_ROUTE)


def test_the_post_as_a_cloudevent_carries_the_consumers_rules() -> None:
    """W125, W129–W134: the published payload, and the rules in its description."""
    digest = built([report(MONDAY)])
    digest.post(instance="urn:fl", url="/factory/feedback/digests/2026-W47", routes=["k"],
                at=MONDAY, appraise=reports_only_line)  # fmt: skip
    post = digest.collect_events()[0]
    value = json.loads(to_message(POSTED, post, "urn:fl").value)
    payload = DigestPosted.model_validate(value["data"])
    assert payload.event == "digest"
    assert payload.item_id == "urn:fl/" + payload.feedback_path
    assert payload.standing_issue_title == f"Wrong answers — {COACH}"
    assert payload.standing_issue_labels == ["feedback", "wrong-answer-digest"]
    assert len(payload.previous_items) == 12
    assert UUID(value["subject"]) == digest.id
    for rule in ("W129", "W130", "W131", "W132", "W133", "W134"):
        assert rule in (contracts.digests.__doc__ or "")
    described = DigestPosted.model_json_schema()["description"]  # what the schema publishes
    for rule in ("previousItems", "issueUrl", "Wrong answers — <agent>", "wrong-answer-digest",
                 "never in the fleet's feedback inbox"):  # fmt: skip
        assert rule in " ".join(described.split())


def test_tables_round_trip_through_the_event() -> None:
    digest = built([report(MONDAY)])
    assert DigestTables.model_validate(digest.tables).week == WEEK


@pytest.mark.parametrize("week", ["2026-W54", "2025-W53", "2026-48", "26-W01"])
def test_a_name_that_is_no_iso_week_is_refused(week: str) -> None:
    with pytest.raises(ValueError, match="ISO week"):
        start_of(week)


def test_the_v2_post_carries_the_night_s_figure_as_with_run_and_passed() -> None:
    """D53, D151: on `evaluation.feedback.v2.digest-posted`, `health.withRun`/`passed` are the
    night's alone: a person's passing try on demand does not move them (v1 counted every
    runner's newest run: 1 of 1 here), and is its own figure in `health.runners`."""
    night_failed_then_maria_passed = {
        RunnerKey("night", "carol"): False,
        RunnerKey("manual", "maria"): True,
    }
    cases = [CaseFact("_Evals/coach/1", COACH, uuid4(), night_failed_then_maria_passed)]
    tables = build(WEEK, [report(MONDAY)], cases, bound=200)
    digest = Digest.build(digest_id=digest_id_for("t1", WEEK), tenant_id="t1", tables=tables,
                          at=datetime(2026, 11, 23, 6, tzinfo=UTC))  # fmt: skip
    digest.collect_events()
    digest.post(instance="urn:fl", url="/d", routes=["k"], at=MONDAY, appraise=reports_only_line)
    post = digest.collect_events()[0]
    value = json.loads(to_message(POSTED, post, "urn:fl").value)
    assert value["type"] == "evaluation.feedback.v2.DigestPosted"
    assert POSTED.topic == "evaluation.feedback.v2.digest-posted"
    health = value["data"]["health"]
    assert (health["withRun"], health["passed"]) == (1, 0)
    assert health["runners"] == [
        {"runner": "night", "ranBy": None, "withRun": 1, "passed": 0},
        # D135: the digest names no person; who ran it on demand is "someone".
        {"runner": "manual", "ranBy": "someone", "withRun": 1, "passed": 1},
    ]
    assert health == json.loads(value["data"]["extraContext"])["health"]  # one figure, twice
    described = DigestPosted.model_json_schema()["properties"]["health"]["description"]
    assert "night" in described
