"""The feedback context, declared once: what the runtime runs of it."""

from contracts.feedback import RecordFeedback
from projections.feedback_list import FeedbackList
from services.declaration import Command, Context
from services.feedback.api import feedback_routes
from services.feedback.handlers import created_by, record_feedback
from services.feedback.published import PUBLICATIONS
from services.feedback.subscriptions import SUBSCRIPTIONS
from services.permissions.rules import FEEDBACK_GIVERS

FEEDBACK = Context(
    "feedback",
    commands=(
        # Decided from the command alone when new: the handler reads nothing from the store
        # for a feedback that does not exist yet.
        Command(
            RecordFeedback, record_feedback, permits=FEEDBACK_GIVERS, creates=created_by, alone=True
        ),
    ),
    routes=lambda http, given: feedback_routes(http),
    read_models=(FeedbackList(),),
    publications=PUBLICATIONS,
    subscriptions=SUBSCRIPTIONS,
)
