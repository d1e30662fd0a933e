"""A change of an agent re-runs its confirmed cases first (seed 000: cases are "replayed
whenever the instructions or the model change"; decisions D242): the planning order, the cap,
what each line and the note say, and a change consumed once the case ran after it."""

from datetime import timedelta
from uuid import uuid5

from hypothesis import given
from hypothesis import strategies as st

from services.nightly.planning import OVER_CAP, plan_night
from services.nightly.reruns import Change, owed, rerun_reason, told
from tests.unit.test_nightly_planning import EU, NOW, NS, case, refs, settings

MODEL = Change(
    "Coach", "model", "claude-x", "claude-y", NOW - timedelta(hours=5), NOW - timedelta(hours=4)
)


def test_a_changed_agents_cases_come_first_and_their_lines_say_why() -> None:
    """D242: ahead of the never-run (W93), in W93's order among themselves."""
    cases = [
        case("a"),
        case("b", ran=1, agent="Other"),
        case("c", ran=1),
        case("d", ran=3),
        case("e", ran=2, agent="Other"),
    ]
    plan = plan_night(cases, settings(), EU, agent_configured=True, now=NOW, changes=[MODEL])
    assert refs(plan.selected) == ["d", "c", "a", "e", "b"]
    reason = f"re-run first: model changed claude-x → claude-y at {MODEL.at.isoformat()}"
    assert [s.rerun for s in plan.selected] == [reason, reason, None, None, None]
    assert plan.selected[0].as_json()["rerun"] == reason
    assert plan.selected[2].as_json()["rerun"] is None
    assert plan.note == "re-run first after a change of Coach: 2 selected"


def test_within_the_cap_the_changed_cases_left_over_are_said_in_their_lines_and_the_note() -> None:
    """D242: the cap holds; the changed cases it leaves out are over-cap lines saying why,
    and the note counts them apart from the cap's own count."""
    cases = [case("a"), case("c", ran=1), case("d", ran=3), case("f", ran=2, model="us-1")]
    plan = plan_night(
        cases, settings(max_cases=1), EU, agent_configured=True, now=NOW, changes=[MODEL]
    )
    assert refs(plan.selected) == ["d"]
    lines = {line["case"]: line for line in plan.lines}
    over = lines[str(uuid5(NS, "c"))]
    assert (over["outcome"], over["rerun"][:13]) == (OVER_CAP, "re-run first:")
    assert lines[str(uuid5(NS, "f"))]["rerun"].startswith("re-run first:")  # not EU: said too
    assert "rerun" not in lines[str(uuid5(NS, "a"))]
    assert plan.note == (
        "re-run first after a change of Coach: 1 selected, 1 over-cap, first again at the "
        "next night, 1 cannot run; cap reached: 1 cases ran at most, 2 left over-cap"
    )


def test_a_case_run_after_the_change_owes_it_nothing() -> None:
    """D242: the run after the change is the re-run; the next night orders normally."""
    after = MODEL.recorded_at + timedelta(minutes=1)
    assert owed("Coach", after, [MODEL]) == []
    assert owed("Coach", MODEL.recorded_at - timedelta(minutes=1), [MODEL]) == [MODEL]
    assert owed("Coach", None, [MODEL]) == []  # never run: first anyway, as never run
    assert owed("Other", NOW - timedelta(days=3), [MODEL]) == []
    rerun = case("c", last_run_at=after)
    plan = plan_night([case("a"), rerun], settings(), EU, agent_configured=True, now=NOW,
                      changes=[MODEL])  # fmt: skip
    assert refs(plan.selected) == ["a", "c"]
    assert plan.note == ""


def test_every_owed_change_is_named_newest_first_up_to_three() -> None:
    changes = [
        Change("Coach", what, None if n == 0 else f"v{n}", f"v{n + 1}",
               NOW - timedelta(hours=10 - n), NOW - timedelta(hours=10 - n))
        for n, what in enumerate(("instructions", "release", "model", "model", "release"))
    ]  # fmt: skip
    found = owed("Coach", NOW - timedelta(days=1), changes)
    assert [c.after for c in found] == ["v5", "v4", "v3", "v2", "v1"]
    reason = rerun_reason(found)
    assert reason is not None
    assert reason.startswith("re-run first: release changed v4 → v5 at ")
    assert reason.endswith("(and 2 earlier)")
    assert told(changes[0]).startswith("instructions changed to v1 at ")


@given(st.permutations(["a", "b", "c", "d", "e", "f"]), st.integers(min_value=1, max_value=6))
def test_the_same_cases_and_changes_always_plan_the_same_night(order: list[str], cap: int) -> None:
    """W94 with D242: the changes do not make the plan depend on the cases' order."""
    ran = {"a": None, "b": 1, "c": 2, "d": 3, "e": 1, "f": 2}
    agents = {"a": "Coach", "b": "Coach", "c": "Other", "d": "Coach", "e": "Other", "f": "Coach"}
    cases = [case(ref, ran=ran[ref], agent=agents[ref]) for ref in order]
    plan = plan_night(
        cases, settings(max_cases=cap), EU, agent_configured=True, now=NOW, changes=[MODEL]
    )
    assert refs(plan.selected) == ["d", "f", "b", "a", "c", "e"][:cap]
