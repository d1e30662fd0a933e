"""The datasets context, declared once: what the runtime runs of it."""

from contracts.neighbours import ArtifactValidated, RunCompleted
from projections.datasets import Datasets
from services.datasets.api import dataset_routes
from services.datasets.commands import (
    AddTask,
    GrantShareConsent,
    PublishVersion,
    RemoveTask,
    ShareCopy,
)
from services.datasets.consent import consent_service_for
from services.datasets.handlers import (
    add_task,
    created_run,
    created_validation,
    grant_share_consent,
    harvest_task,
    harvest_validation,
    publish_version,
    remove_task,
    share_copy,
)
from services.datasets.published import PUBLICATIONS
from services.datasets.subscriptions import SUBSCRIPTIONS
from services.declaration import Command, Context
from services.permissions.rules import OPERATOR

DATASETS = Context(
    "datasets",
    commands=(
        Command(RunCompleted, harvest_task, permits=OPERATOR, creates=created_run),
        Command(
            ArtifactValidated, harvest_validation, permits=OPERATOR, creates=created_validation
        ),
        Command(AddTask, add_task, permits=OPERATOR),
        Command(RemoveTask, remove_task, permits=OPERATOR),
        Command(PublishVersion, publish_version, permits=OPERATOR),
        Command(GrantShareConsent, grant_share_consent, permits=OPERATOR),
        Command(ShareCopy, share_copy, permits=OPERATOR),
    ),
    routes=lambda http, given: dataset_routes(
        http, given.store, lambda tenant: consent_service_for(given.environ, tenant)
    ),
    read_models=(Datasets(),),
    publications=PUBLICATIONS,
    subscriptions=SUBSCRIPTIONS,
)
