"""Every context's subscriptions, in one list (as the command handlers are in one registry)."""

from services.feedback.subscriptions import SUBSCRIPTIONS as FEEDBACK_SUBSCRIPTIONS
from services.kafka.inbound.neighbours import DATASET_SUBSCRIPTIONS
from services.kafka.inbound.subscription import Subscription
from services.learning.subscriptions import SUBSCRIPTIONS as LEARNING_SUBSCRIPTIONS

SUBSCRIPTIONS: tuple[Subscription, ...] = (
    *FEEDBACK_SUBSCRIPTIONS,
    *DATASET_SUBSCRIPTIONS,
    *LEARNING_SUBSCRIPTIONS,
)
