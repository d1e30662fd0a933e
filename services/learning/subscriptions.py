"""What the learning context consumes from Kafka: its three neighbours' evidence (C39–C41,
declared in ``services.kafka.inbound.neighbours``) and the agent registry's answer to a Draft
release (C32)."""

from contracts import topics
from contracts.learning import DraftReleaseOpenedMessage
from services.kafka.inbound.neighbours import LEARNING_SUBSCRIPTIONS
from services.kafka.inbound.subscription import Subscription

DRAFT_RELEASE_OPENED = Subscription(
    topic=topics.DRAFT_RELEASE_OPENED,
    envelope=DraftReleaseOpenedMessage,
    title="DraftReleaseOpened",
    description="The agent registry opened the Draft release an accepted proposal asked for; "
    "its id becomes the proposal's resultingReleaseId (SPEC C32).",
    strict=False,
    # The release callback's scope (``POST /factory/learning/proposals/{id}/release``): the
    # event records the same fact, so a key without it cannot post the event either.
    scope="factory.assets.write",
)

SUBSCRIPTIONS = (*LEARNING_SUBSCRIPTIONS, DRAFT_RELEASE_OPENED)
