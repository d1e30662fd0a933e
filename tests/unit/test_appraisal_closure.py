"""Closing a task appraises it once per transition; a follow-up only on done with residue or a
cut-short run, never for distress alone, never on dropped, citing the task by id (SPEC M45,
M46). Given events, when the command, then events."""

from datetime import UTC, datetime

import pytest

from contracts.appraisal_records import FollowUpStaged
from contracts.neighbours import RunCounters
from contracts.runtime_facts import TaskStatus
from services.appraisal.charter import EMPTY
from services.appraisal.closure import TaskClosure, follow_up_id, stages_follow_up
from services.appraisal.closures import read_closure
from services.appraisal.facts import Facts, FeedbackFact, RunFact
from services.appraisal.labels import Label
from services.appraisal.outcomes import CONTRIBUTIONS
from services.appraisal.published import follow_up_staged

AT = datetime(2026, 12, 2, 9, tzinfo=UTC)


@pytest.mark.parametrize(
    ("status", "label", "cut_short", "stages"),
    [
        (TaskStatus.done, Label.disappointment, False, True),
        (TaskStatus.done, Label.regret, False, True),
        (TaskStatus.done, Label.frustration, False, True),
        (TaskStatus.done, Label.embarrassment, False, True),
        (TaskStatus.done, Label.distress, False, False),  # distress alone: nothing (M45)
        (TaskStatus.done, Label.neutral, False, False),
        (TaskStatus.done, Label.pride, False, False),
        (TaskStatus.done, Label.distress, True, True),  # a ceiling-cut run accepted as done
        (TaskStatus.dropped, Label.disappointment, False, False),  # the owner declined it
        (TaskStatus.dropped, Label.distress, True, False),
    ],
)
def test_when_a_closure_stages_a_follow_up(
    status: TaskStatus, label: Label, cut_short: bool, stages: bool
) -> None:  # M45
    assert stages_follow_up(status, label, cut_short) is stages


def closed(status: TaskStatus = TaskStatus.done) -> TaskClosure:
    return TaskClosure.note(tenant_id="t", task_id="task-1a2b", transition_id="tr-1",
                            status=status, run_ids=["r-1"], closed_at=AT, at=AT)  # fmt: skip


def test_a_transition_is_appraised_once_and_its_follow_up_cites_the_task_by_id() -> None:
    closure = closed()
    assert closure.appraise(label=Label.disappointment, positive=0.0, negative=1.0,
                            cut_short=False, channels=["edit", "edit"], at=AT)  # fmt: skip
    assert not closure.appraise(label=Label.regret, positive=0.0, negative=1.0,
                                cut_short=True, channels=[], at=AT)  # fmt: skip
    events = closure.collect_events()
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["Noted", "Appraised", "FollowUpStaged"]
    staged = events[-1]
    published = follow_up_staged(staged)
    assert isinstance(published, FollowUpStaged)
    assert published.task_id == "task-1a2b"  # M46: by id
    assert published.follow_up_id == str(follow_up_id("t", "tr-1"))
    assert published.channels == ["edit"]
    assert "name" not in FollowUpStaged.model_fields
    assert "title" not in FollowUpStaged.model_fields


def test_a_dropped_closure_is_appraised_without_a_follow_up() -> None:
    closure = closed(TaskStatus.dropped)
    closure.appraise(label=Label.regret, positive=0.0, negative=1.0, cut_short=True,
                     channels=["counter"], at=AT)  # fmt: skip
    assert [type(e).__name__ for e in closure.collect_events()] == ["Noted", "Appraised"]


def test_a_closure_reads_its_runs_free_readout_and_whether_one_was_cut_short() -> None:
    run = RunFact("r-1", "coach", AT, counters=RunCounters(ceilingHits=1))
    correction = FeedbackFact("f-1", "r-1", "correction", None, AT)
    reading = read_closure(Facts(feedback=(correction,), runs=(run,)), EMPTY, AT, CONTRIBUTIONS)
    assert (reading.label, reading.cut_short) == (Label.distress, True)
    assert reading.channels == ("counter", "edit")
    assert str(reading.valence) == "\u22121.5"
