"""What the datasets context consumes from Kafka: runs and validations of other services,
harvested as dataset tasks (SPEC C24, C25). Read tolerantly: a field we do not know is
ignored, never a dead letter.

Each names the scope of the HTTP route that writes the same fact (SPEC C52), which a key must
hold to post it to ``POST /factory/events``: a harvested run or a validation is a dataset task
(``POST .../datasets/{id}/tasks``: ``factory.evaluation.run``).
"""

from contracts import topics
from contracts.envelope import ArtifactValidatedMessage, RunCompletedMessage
from services.kafka.inbound.subscription import Subscription

SUBSCRIPTIONS = (
    Subscription(
        topic=topics.RUN_COMPLETED,
        envelope=RunCompletedMessage,
        title="RunCompleted",
        description="A run ended; it becomes a dataset task candidate (HarvestTask).",
        strict=False,
        scope="factory.evaluation.run",
    ),
    Subscription(
        topic=topics.ARTIFACT_VALIDATED,
        envelope=ArtifactValidatedMessage,
        title="ArtifactValidated",
        description="A validator's outcome, enriching the dataset tasks (HarvestValidation).",
        strict=False,
        scope="factory.evaluation.run",
    ),
)
