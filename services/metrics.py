"""Prometheus metrics (seed 004's metric names, dots as underscores).

They are served at ``/metrics`` on a port of their own (``FEEDBACKLOOP_METRICS_PORT``), never
on the API's: whoever reaches the API is not therefore an operator (issue 8). A tenant's id
is a label value only where the operator says so (``FEEDBACKLOOP_METRICS_TENANT_LABELS``):
otherwise whoever can scrape would learn every tenant's name and how busy it is.
"""

from prometheus_client import Counter, Gauge, Histogram

_tenant_ids_shown = False


def show_tenant_ids(shown: bool) -> None:
    """Set once by the composition root from the settings."""
    global _tenant_ids_shown
    _tenant_ids_shown = shown


def tenant_label(tenant_id: str) -> str:
    """The ``tenant`` label's value: the id if configured, else empty (Prometheus reads an
    empty label as no label, so every tenant's count adds up in one series)."""
    return tenant_id if _tenant_ids_shown else ""


# SPEC C48: connectsoft.factory.learning.feedback, counter, {feedback}, by tenant and kind
# (the tenant only where configured: ``tenant_label``).
FEEDBACK_RECORDED = Counter(
    "connectsoft_factory_learning_feedback",
    "Feedback recorded, by tenant and kind.",
    ["tenant", "kind"],
)

# Every reader of the log (relay, read models, hand-over webhook, …), by reader name.
READER_POSITION = Gauge(
    "feedbackloop_reader_position", "The last log position the reader applied.", ["reader"]
)
READER_LAG = Gauge(
    "feedbackloop_reader_lag", "How many log positions the reader is behind the head.", ["reader"]
)
READER_PARKED = Gauge(
    "feedbackloop_reader_parked",
    "Events parked by the reader, waiting for an operator.",
    ["reader"],
)
# The alert for parked events (an incident, not a readiness failure): 1 while some reader of
# the instance has parked events, as the last /readyz of this process found; the count per
# reader beside it (the inbound consumers' as "inbound"). Apart from READER_PARKED, which
# the process leading a log reader sets from what it parked itself.
DEGRADED = Gauge(
    "feedbackloop_degraded",
    "1 while some reader of the instance has parked events (ready, but an operator is needed).",
)
INSTANCE_PARKED = Gauge(
    "feedbackloop_instance_parked_events",
    "Parked events of the whole instance by reader, as the last /readyz found them.",
    ["reader"],
)
# 1 while the process waits at start for a server it cannot reach (services/waiting.py).
START_WAITING = Gauge(
    "feedbackloop_start_waiting",
    "1 while the process waits at start for a dependency it cannot reach.",
    ["dependency"],
)
READER_PARKED_TOTAL = Counter(
    "feedbackloop_reader_parked_events", "Events the reader has parked, ever.", ["reader"]
)
READER_RESTARTS = Counter(
    "feedbackloop_task_restarts",
    "Restarts of a supervised background task after a crash.",
    ["task"],
)

# SPEC C50: connectsoft.factory.learning.datasets, updown, by tenant and target. +1 when a
# dataset's first version is stored, by the process that published it: summed over the
# instances, each series is how many datasets have a published version.
DATASETS = Gauge(
    "connectsoft_factory_learning_datasets",
    "Datasets with a published version, by tenant and target (an up-down count).",
    ["tenant", "target"],
)

# SPEC C49: connectsoft.factory.learning.proposals, updown, by tenant, kind and state. Moved
# once per change, when its events are stored, by the process that decided it (+1 on the new
# state, -1 on the old): summed over the instances, each state's series is how many proposals
# are in it.
LEARNING_PROPOSALS = Gauge(
    "connectsoft_factory_learning_proposals",
    "Learning proposals, by tenant, kind and state (an up-down count).",
    ["tenant", "kind", "state"],
)

# The command bus's way, in the process that runs it (an API worker, an inbound consumer):
# how long a batch waited to be taken, was decided and was appended, and how many commands
# each append carried (group commit). Issue 12: on two busy cores a batch's own work is a
# fraction of its way; the rest is waiting for a thread, the interpreter and PostgreSQL.
BUS_SECONDS = Histogram(
    "feedbackloop_bus_seconds",
    "A command batch's time in each stage of the command bus: queued (its first command's "
    "wait to be taken), decide (until decided, a hand-over to a thread included if it "
    "took one), append (until stored, likewise).",
    ["stage"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
BUS_BATCH_COMMANDS = Histogram(
    "feedbackloop_bus_batch_commands",
    "Commands decided together and appended in one transaction.",
    buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000),
)
