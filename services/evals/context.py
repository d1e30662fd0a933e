"""The evals context, declared once: what the runtime runs of it."""

from fastapi import APIRouter

from contracts.comparisons import OpenComparison, RecordComparedCase
from contracts.evals import (
    ConfirmEvalCaseCommand,
    LiftEvalCase,
    PatchEvalCaseCommand,
    RecordEvalRun,
)
from projections.eval_cases import EvalCases
from services.declaration import Command, Context
from services.evals.api import eval_routes
from services.evals.comparison_api import comparison_routes
from services.evals.comparison_handlers import open_comparison, record_compared_case
from services.evals.handlers import (
    confirm_eval_case,
    lift_eval_case,
    patch_eval_case,
    record_eval_run,
    shown,
)
from services.evals.published import PUBLICATIONS
from services.permissions.rules import LIFTERS, MAINTAINER


def combined(*routers: APIRouter) -> APIRouter:
    router = APIRouter()
    for each in routers:
        router.include_router(each)
    return router


EVALS = Context(
    "evals",
    commands=(
        Command(LiftEvalCase, lift_eval_case, permits=LIFTERS),
        Command(PatchEvalCaseCommand, patch_eval_case, permits=MAINTAINER, replays=shown),
        Command(ConfirmEvalCaseCommand, confirm_eval_case, permits=MAINTAINER, replays=shown),
        Command(RecordEvalRun, record_eval_run, permits=MAINTAINER),
        # D181: a comparison is opened and recorded by a maintainer of the agent, or by the
        # service for the CI gate (no roles: the gate's cases run as their confirmers).
        Command(OpenComparison, open_comparison, permits=MAINTAINER),
        Command(RecordComparedCase, record_compared_case, permits=MAINTAINER),
    ),
    routes=lambda http, given: combined(
        eval_routes(http, given.case_runner), comparison_routes(http, given.case_runner)
    ),
    read_models=(EvalCases(),),
    publications=PUBLICATIONS,
)
