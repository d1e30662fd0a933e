"""The review queues context, declared once: its commands, routes and read model."""

from contracts.queues import ClaimNext, ClaimReport, DefineQueueCommand, ReleaseClaim, RemoveQueue
from projections.review_queues import ReviewQueues
from services.declaration import Command, Context
from services.permissions.rules import QUEUE_KEEPERS, RELEASERS, REVIEWER
from services.queues.api import queue_routes
from services.queues.handlers import (
    claim_next,
    claim_report,
    define_queue,
    defined_now,
    release_claim,
    remove_queue,
)

QUEUES = Context(
    "queues",
    commands=(
        Command(DefineQueueCommand, define_queue, permits=QUEUE_KEEPERS, replays=defined_now),
        Command(RemoveQueue, remove_queue, permits=QUEUE_KEEPERS),
        Command(ClaimReport, claim_report, permits=REVIEWER),
        Command(ClaimNext, claim_next, permits=REVIEWER),
        Command(ReleaseClaim, release_claim, permits=RELEASERS),
    ),
    routes=lambda http, given: queue_routes(http),
    read_models=(ReviewQueues(),),
)
