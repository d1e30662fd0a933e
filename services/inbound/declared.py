"""Every context's subscriptions, in one list (as the command handlers are in one registry)."""

from services.feedback.subscriptions import SUBSCRIPTIONS as FEEDBACK_SUBSCRIPTIONS
from services.inbound.subscription import Subscription

SUBSCRIPTIONS: tuple[Subscription, ...] = (*FEEDBACK_SUBSCRIPTIONS,)
