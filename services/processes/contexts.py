"""The bounded contexts this service runs: the one list the composition root, the documents,
the relay and the inbound consumer loop over. A new context is one line here."""

from projections.read_model import Projection
from services.access.context import ACCESS
from services.agents.context import AGENTS
from services.appraisal.context import APPRAISAL
from services.appraisal.weekly import reports_only_line
from services.artifacts.context import ARTIFACTS
from services.datasets.context import DATASETS
from services.declaration import Context
from services.digests.context import digests
from services.evals.context import EVALS
from services.feedback.context import FEEDBACK
from services.kafka.inbound.subscription import Subscription
from services.kafka.publication import Publication
from services.learning.context import LEARNING
from services.nightly.context import NIGHTLY
from services.operations.context import OPERATIONS
from services.owners.context import OWNERS
from services.privacy.context import PRIVACY
from services.queues.context import QUEUES
from services.reports.context import REPORTS
from services.widget.context import WIDGET

CONTEXTS: tuple[Context, ...] = (
    FEEDBACK,
    REPORTS,
    ARTIFACTS,
    EVALS,
    digests(appraise=reports_only_line),
    NIGHTLY,
    DATASETS,
    LEARNING,
    APPRAISAL,
    ACCESS,
    PRIVACY,
    OWNERS,  # before AGENTS: its /factory/agents/{agent}/webhook is matched first
    AGENTS,
    OPERATIONS,
    QUEUES,
    WIDGET,
)

PUBLICATIONS: tuple[Publication, ...] = tuple(p for c in CONTEXTS for p in c.publications)
SUBSCRIPTIONS: tuple[Subscription, ...] = tuple(s for c in CONTEXTS for s in c.subscriptions)


def consumed_topics() -> tuple[str, ...]:
    """Every topic the inbound consumer reads, once each, in the order declared."""
    return tuple(dict.fromkeys(subscription.topic for subscription in SUBSCRIPTIONS))


def read_models() -> list[Projection]:
    """Every context's read models, each run by its own reader."""
    return [projection for context in CONTEXTS for projection in context.read_models]
