"""The appraisal context, declared once: what the runtime runs of it."""

from eventsourcing.utils import resolve_topic

from contracts.appraisal import WriteCharter
from projections.appraisal import AppraisalFacts
from services.appraisal.api import appraisal_routes
from services.appraisal.handlers import write_charter, written_again
from services.declaration import Command, Context

# RunCompleted reaches the store as the datasets context's harvest (its ``run`` field). The
# event's stored topic names it, so that this context need not import another.
HARVESTED_RUN = "services.datasets.domain:HarvestedRun.Harvested"

APPRAISAL = Context(
    "appraisal",
    commands=(Command(WriteCharter, write_charter, replays=written_again),),
    routes=lambda http, given: appraisal_routes(http),
    read_models=(AppraisalFacts(run_events=(resolve_topic(HARVESTED_RUN),)),),
)
