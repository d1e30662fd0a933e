"""The appraisal context, declared once: what the runtime runs of it."""

from contracts.appraisal import WriteCharter
from projections.appraisal import AppraisalFacts
from services.appraisal.api import appraisal_routes
from services.appraisal.handlers import write_charter, written_again
from services.declaration import Command, Context
from services.permissions.rules import ADMIN

APPRAISAL = Context(
    "appraisal",
    commands=(Command(WriteCharter, write_charter, permits=ADMIN, replays=written_again),),
    routes=lambda http, given: appraisal_routes(http),
    read_models=(AppraisalFacts(),),
)
