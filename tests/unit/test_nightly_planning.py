"""Planning a night: a pure, deterministic function (SPEC W78, W84, W93–W98, §3.8)."""

from datetime import UTC, datetime, timedelta
from uuid import UUID, uuid5

from hypothesis import given
from hypothesis import strategies as st

from services.nightly.catalogue import Catalogue
from services.nightly.domain import SUCCEEDED, WARNING, Night, night_id, night_run_id
from services.nightly.planning import (
    CONFIRMER_LACKS_UPDATE,
    NO_CONFIRMER,
    NO_LANGUAGE_MODEL,
    NO_MODEL,
    NOT_EU,
    OVER_CAP,
    PERMISSION_CHECK_UNAVAILABLE,
    RESIDENCY_UNREADABLE,
    Candidate,
    plan_night,
)
from services.nightly.settings import NightlySettings

NOW = datetime(2026, 11, 29, 1, 0, tzinfo=UTC)
EU = Catalogue({"eu-1": "eu", "us-1": "us", "unmarked": None})
NS = UUID("00000000-0000-0000-0000-000000000001")


def case(ref: str, *, ran: int | None = None, **changes: object) -> Candidate:
    fields: dict[str, object] = {
        "case_id": uuid5(NS, ref),
        "ref": ref,
        "confirmed_by": "alice",
        "agent": "Coach",
        "model": None,
        "last_run_at": None if ran is None else NOW - timedelta(days=ran),
    }
    fields.update(changes)
    return Candidate(**fields)  # type: ignore[arg-type]


def settings(**changes: object) -> NightlySettings:
    base: dict[str, object] = {"enabled": True, "model": "eu-1", "max_cases": 15}
    base.update(changes)
    return NightlySettings(**base)  # type: ignore[arg-type]


def refs(plan_selected: list[object]) -> list[str]:
    return [s.ref for s in plan_selected]  # type: ignore[attr-defined]


def test_never_run_first_then_the_oldest_last_run_ties_by_ref() -> None:
    """W93."""
    cases = [case("c", ran=1), case("b"), case("d", ran=5), case("a"), case("e", ran=5)]
    plan = plan_night(cases, settings(), EU, agent_configured=True, now=NOW)
    assert refs(plan.selected) == ["a", "b", "d", "e", "c"]
    assert plan.lines == []
    assert plan.note == ""


def test_the_first_max_cases_runnable_run_the_rest_are_over_cap_and_the_note_says_so() -> None:
    """W95, W96: a case that cannot run takes no slot."""
    cases = [case("a"), case("b", model="us-1"), case("c"), case("d"), case("e", ran=1)]
    plan = plan_night(cases, settings(max_cases=2), EU, agent_configured=True, now=NOW)
    assert refs(plan.selected) == ["a", "c"]
    outcomes = {line["case"]: (line["outcome"], line["reason"]) for line in plan.lines}
    assert outcomes == {
        str(uuid5(NS, "b")): ("skipped", NOT_EU),
        str(uuid5(NS, "d")): (OVER_CAP, OVER_CAP),
        str(uuid5(NS, "e")): (OVER_CAP, OVER_CAP),
    }
    assert "cap reached" in plan.note
    assert all(line["at"] == NOW.isoformat() for line in plan.lines)


def test_each_reason_a_case_cannot_run() -> None:
    """W76 no confirmer, W84 no model, W97 non-EU, W98 unreadable mark (§3.8 vocabulary)."""
    cases = [
        case("no-confirmer", confirmed_by=None),
        case("pinned-us", model="us-1"),
        case("pinned-unmarked", model="unmarked"),
        case("pinned-unlisted", model="mystery"),
        case("pinned-eu", model="eu-1"),
    ]
    plan = plan_night(cases, settings(model=None), EU, agent_configured=True, now=NOW)
    assert refs(plan.selected) == ["pinned-eu"]
    assert plan.selected[0].model == "eu-1"
    reasons = {line["case"]: line["reason"] for line in plan.lines}
    assert reasons == {
        str(uuid5(NS, "no-confirmer")): NO_CONFIRMER,
        str(uuid5(NS, "pinned-us")): NOT_EU,
        str(uuid5(NS, "pinned-unmarked")): RESIDENCY_UNREADABLE,
        str(uuid5(NS, "pinned-unlisted")): RESIDENCY_UNREADABLE,
    }
    unpinned = plan_night([case("x")], settings(model=None), EU, agent_configured=True, now=NOW)
    assert [line["reason"] for line in unpinned.lines] == [NO_MODEL]


def test_the_pinned_model_wins_and_no_model_is_ever_substituted() -> None:
    """W97, W98: a pinned non-EU model is skipped even though the declared Model is EU."""
    plan = plan_night([case("a", model="us-1")], settings(), EU, agent_configured=True, now=NOW)
    assert plan.selected == []
    assert plan.lines[0]["model"] == "us-1"


def test_an_unreadable_catalogue_skips_every_case_and_the_note_says_why() -> None:
    broken = Catalogue({}, "the model catalogue does not parse: boom")
    plan = plan_night([case("a"), case("b")], settings(), broken, agent_configured=True, now=NOW)
    assert plan.selected == []
    assert {line["reason"] for line in plan.lines} == {RESIDENCY_UNREADABLE}
    assert "does not parse" in plan.note


def test_no_agent_configured_is_no_language_model() -> None:
    """W69: nothing to talk to; nothing runs, nothing is fabricated."""
    plan = plan_night([case("a")], settings(), EU, agent_configured=False, now=NOW)
    assert plan.selected == []
    assert [line["reason"] for line in plan.lines] == [NO_LANGUAGE_MODEL]


def test_the_note_names_the_settings_that_did_not_parse() -> None:
    """W86."""
    named = settings(unparsed=("FEEDBACKLOOP_EVALS_NIGHTLY_MAX_CASES",))
    plan = plan_night([case("a")], named, EU, agent_configured=True, now=NOW)
    assert "FEEDBACKLOOP_EVALS_NIGHTLY_MAX_CASES" in plan.note


@given(
    st.lists(
        st.tuples(
            st.sampled_from("abcdefgh"),
            st.none() | st.integers(0, 5),
            st.sampled_from([None, "eu-1", "us-1", "unmarked"]),
            st.booleans(),
        ),
        max_size=12,
        unique_by=lambda t: t[0],
    ),
    st.integers(0, 6),
    st.randoms(),
)
def test_the_same_cases_always_plan_the_same_night(
    drawn: list[tuple[str, int | None, str | None, bool]], cap: int, shuffle: object
) -> None:
    """W94: in whatever order the cases are read; and the cap is never exceeded (W95)."""
    cases = [
        case(ref, ran=ran, model=model, confirmed_by="alice" if confirmed else None)
        for ref, ran, model, confirmed in drawn
    ]
    first = plan_night(cases, settings(max_cases=cap), EU, agent_configured=True, now=NOW)
    shuffled = list(cases)
    shuffle.shuffle(shuffled)  # type: ignore[attr-defined]
    again = plan_night(shuffled, settings(max_cases=cap), EU, agent_configured=True, now=NOW)
    assert first == again
    assert len(first.selected) <= cap
    assert len(first.selected) + len(first.lines) == len(cases)  # every case is accounted for


def test_the_night_and_its_runs_have_deterministic_ids() -> None:
    """W87, W91: the same (tenant, night/{date}) names the same night, in every process."""
    assert night_id("t1", "2026-11-29") == night_id("t1", "2026-11-29")
    assert night_id("t1", "2026-11-29") != night_id("t2", "2026-11-29")
    case_id = uuid5(NS, "a")
    assert night_run_id("2026-11-29", case_id) == night_run_id("2026-11-29", case_id)
    assert night_run_id("2026-11-29", case_id) != night_run_id("2026-11-30", case_id)


def planned(lines: list[dict[str, object]]) -> Night:
    return Night.plan(
        tenant_id="t1",
        date="2026-11-29",
        inputs={},
        selected=[{"case": "c1"}, {"case": "c2"}],
        lines=lines,  # type: ignore[arg-type]
        note="",
        at=NOW,
    )


def test_a_conversation_or_a_line_recorded_twice_is_recorded_once() -> None:
    """W91: a finished conversation never repeats; W89: one line per case."""
    night = planned([])
    night.record_conversation("c1", 1, {"index": 1}, at=NOW)
    night.record_conversation("c1", 1, {"index": 1, "again": True}, at=NOW)
    assert night.threads("c1") == {1: {"index": 1}}
    night.finish_case({"case": "c1", "outcome": "ran"}, at=NOW)
    night.finish_case({"case": "c1", "outcome": "failed"}, at=NOW)
    assert [s["case"] for s in night.pending()] == ["c2"]
    assert len(night.lines) == 1


def test_the_end_is_succeeded_or_warning_and_happens_once() -> None:
    """W90: Warning when a case was skipped or failed; over-cap alone is no warning (ours)."""
    clean = planned([{"case": "c9", "outcome": "over-cap"}])
    clean.finish(at=NOW)
    assert (clean.status, clean.finished_at) == (SUCCEEDED, NOW.isoformat())
    clean.finish(at=NOW + timedelta(hours=1))
    assert clean.finished_at == NOW.isoformat()  # W92: a night ends once
    troubled = planned([])
    troubled.finish_case({"case": "c1", "outcome": "failed"}, at=NOW)
    troubled.finish(at=NOW)
    assert troubled.status == WARNING
    troubled.record_conversation("c2", 1, {}, at=NOW)
    assert troubled.threads("c2") == {}  # an ended night records nothing more


def test_a_case_whose_confirmer_lost_the_right_takes_no_slot_and_the_next_runnable_gets_it() -> (
    None
):
    """W95, W99 at planning: MaxCases 3, the oldest case's confirmer lost the right on its
    agent (not on another's) — the three runnable cases run, none is left over-cap; a check
    that cannot be answered takes no slot either and says so (W100)."""
    cases = [case("a", confirmed_by="anna"), case("b"), case("c"), case("d", confirmed_by="olaf")]
    cases.append(case("e", confirmed_by="anna", agent="Writer"))  # anna's right is per agent
    rights = {
        ("alice", "Coach"): None,
        ("anna", "Coach"): CONFIRMER_LACKS_UPDATE,
        ("anna", "Writer"): None,
        ("olaf", "Coach"): PERMISSION_CHECK_UNAVAILABLE,
    }
    plan = plan_night(
        cases, settings(max_cases=3), EU, agent_configured=True, now=NOW, rights=rights
    )
    assert refs(plan.selected) == ["b", "c", "e"]
    reasons = {line["case"]: (line["outcome"], line["reason"]) for line in plan.lines}
    assert reasons == {
        str(uuid5(NS, "a")): ("skipped", CONFIRMER_LACKS_UPDATE),
        str(uuid5(NS, "d")): ("skipped", PERMISSION_CHECK_UNAVAILABLE),
    }
    assert "cap reached" not in plan.note
