"""The appraisal context, declared once: what the runtime runs of it."""

from fastapi import APIRouter

from contracts.appraisal import WriteCharter
from contracts.appraisal_records import AppraiseClosure, RecordOwnerOutcome, RecordPassResults
from contracts.runtime_facts import OwnerOutcomeRecorded, TaskClosed
from projections.appraisal import AppraisalFacts
from services.appraisal.api import appraisal_routes
from services.appraisal.api_records import records_routes
from services.appraisal.closures import closure_appraiser
from services.appraisal.handlers import (
    appraise_closure,
    note_task_closure,
    record_owner_outcome,
    record_pass_results,
    write_charter,
    written_again,
)
from services.appraisal.published import PUBLICATIONS
from services.appraisal.subscriptions import SUBSCRIPTIONS
from services.declaration import Command, Context, Order
from services.edge.http import Http
from services.permissions.rules import ADMIN, FEEDBACK_GIVERS, OPERATOR
from services.scheduling.orders import AppraiseClosures

COMMANDS = (
    Command(WriteCharter, write_charter, permits=ADMIN, replays=written_again),
    Command(RecordOwnerOutcome, record_owner_outcome, permits=FEEDBACK_GIVERS),
    Command(OwnerOutcomeRecorded, record_owner_outcome, permits=FEEDBACK_GIVERS),
    Command(TaskClosed, note_task_closure, permits=OPERATOR),
    Command(AppraiseClosure, appraise_closure, permits=OPERATOR),
    Command(RecordPassResults, record_pass_results, permits=OPERATOR),
)


def routes(http: Http) -> APIRouter:
    router = appraisal_routes(http)
    router.include_router(records_routes(http))
    return router


APPRAISAL = Context(
    "appraisal",
    commands=COMMANDS,
    routes=lambda http, given: routes(http),
    read_models=(AppraisalFacts(),),
    publications=PUBLICATIONS,
    subscriptions=SUBSCRIPTIONS,
    orders=(Order(AppraiseClosures, closure_appraiser),),
)
