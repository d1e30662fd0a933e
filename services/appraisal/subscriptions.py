"""What the appraisal context consumes: the agents' runtime's owner outcomes and the task
system's closings (SPEC M33, M45), read tolerantly. Each names the scope of the route that
writes the same fact (SPEC C52): an owner outcome is the owner's feedback on a draft
(``POST /factory/appraisal/outcomes``); a closing is appraised as an evaluation run is."""

from contracts import topics
from contracts.envelope import OwnerOutcomeRecordedMessage, TaskClosedMessage
from services.kafka.inbound.subscription import Subscription

SUBSCRIPTIONS = (
    Subscription(
        topic=topics.OWNER_OUTCOME_RECORDED,
        envelope=OwnerOutcomeRecordedMessage,
        title="OwnerOutcomeRecorded",
        description="The owner's verdict on a run's delivered draft (SPEC M32, M33).",
        strict=False,
        scope="factory.feedback.write",
    ),
    Subscription(
        topic=topics.TASK_CLOSED,
        envelope=TaskClosedMessage,
        title="TaskClosed",
        description="A task moved into done or dropped: noted, then appraised once (M45).",
        strict=False,
        scope="factory.evaluation.run",
    ),
)
