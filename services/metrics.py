"""Prometheus metrics (seed 004's metric names, dots as underscores).

They are served at ``/metrics`` on a port of their own (``FEEDBACKLOOP_METRICS_PORT``), never
on the API's: whoever reaches the API is not therefore an operator (issue 8). A tenant's id
is a label value only where the operator says so (``FEEDBACKLOOP_METRICS_TENANT_LABELS``):
otherwise whoever can scrape would learn every tenant's name and how busy it is.
"""

from prometheus_client import Counter, Gauge

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
READER_PARKED_TOTAL = Counter(
    "feedbackloop_reader_parked_events", "Events the reader has parked, ever.", ["reader"]
)
READER_RESTARTS = Counter(
    "feedbackloop_task_restarts",
    "Restarts of a supervised background task after a crash.",
    ["task"],
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
