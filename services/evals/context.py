"""The evals context, declared once: what the runtime runs of it."""

from contracts.evals import (
    ConfirmEvalCaseCommand,
    LiftEvalCase,
    PatchEvalCaseCommand,
    RecordEvalRun,
)
from projections.eval_cases import EvalCases
from services.declaration import Command, Context
from services.evals.api import eval_routes
from services.evals.handlers import (
    confirm_eval_case,
    lift_eval_case,
    patch_eval_case,
    record_eval_run,
    shown,
)
from services.evals.published import PUBLICATIONS
from services.permissions.rules import LIFTERS, MAINTAINER

EVALS = Context(
    "evals",
    commands=(
        Command(LiftEvalCase, lift_eval_case, permits=LIFTERS),
        Command(PatchEvalCaseCommand, patch_eval_case, permits=MAINTAINER, replays=shown),
        Command(ConfirmEvalCaseCommand, confirm_eval_case, permits=MAINTAINER, replays=shown),
        Command(RecordEvalRun, record_eval_run, permits=MAINTAINER),
    ),
    routes=lambda http, given: eval_routes(http, given.case_runner),
    read_models=(EvalCases(),),
    publications=PUBLICATIONS,
)
