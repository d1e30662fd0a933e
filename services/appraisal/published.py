"""Which appraisal events leave the service: FollowUpStaged, on a topic of its own (SPEC M45)."""

from typing import Any

from contracts import topics
from contracts.appraisal_records import FollowUpStaged
from services.appraisal.closure import TaskClosure
from services.kafka.publication import Publication


def follow_up_staged(event: Any) -> FollowUpStaged:
    return FollowUpStaged(
        follow_up_id=event.follow_up_id,
        tenant_id=event.tenant_id,
        task_id=event.task_id,
        label=event.label,
        channels=list(event.channels),
        cut_short=event.cut_short,
        staged_at=event.timestamp.isoformat(),
    )


PUBLICATIONS: tuple[Publication, ...] = (
    Publication(
        event=TaskClosure.FollowUpStaged,
        topic=topics.FOLLOW_UP_STAGED,
        payload=FollowUpStaged,
        to_contract=follow_up_staged,
        key="taskId",
        title="FollowUpStaged",
        description="A closed task (done, with residue or cut short) gets one follow-up task, "
        "citing it by id (SPEC M45, M46); for the task system to take.",
    ),
)
