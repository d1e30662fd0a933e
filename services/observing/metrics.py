"""Prometheus metrics (seed 004's metric names, dots as underscores).

They are served at ``/metrics`` on a port of their own (``FEEDBACKLOOP_METRICS_PORT``), never
on the API's: whoever reaches the API is not therefore an operator. That port asks
for no key, so no label value is a tenant's own: neither its id nor what it names (a dataset,
an agent, a target asset). Only where the operator says so
(``FEEDBACKLOOP_METRICS_TENANT_LABELS``) are they shown (``tenant_label``); otherwise whoever
can scrape would learn every tenant's name, its agents and how busy it is.

A count of things that stand (proposals by state, datasets) is a ``ReadModelGauge``: read
from its read model (``services.processes.read_model_gauges``), never moved up and down by the
process that made a change — a one-shot process that raised proposals and another that
decided them would each hold half of the moves, and one of them a negative count. Every
process shows the same whole count: aggregate them with ``max``, not ``sum``.
"""

from collections.abc import Iterator, Mapping, Sequence

from prometheus_client import REGISTRY, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

_tenant_ids_shown = False


def show_tenant_ids(shown: bool) -> None:
    """Set once by the composition root from the settings."""
    global _tenant_ids_shown
    _tenant_ids_shown = shown


def tenant_label(value: str) -> str:
    """A tenant-owned label's value (its id, or a target it names): the value if configured,
    else empty (Prometheus reads an empty label as no label, so every tenant's count adds up
    in one series)."""
    return value if _tenant_ids_shown else ""


class ReadModelGauge(Collector):
    """A gauge whose series are set all at once from a read model's counts."""

    def __init__(self, name: str, documentation: str, labels: Sequence[str]) -> None:
        self.name, self.documentation, self.labels = name, documentation, list(labels)
        self.values: dict[tuple[str, ...], float] = {}
        REGISTRY.register(self)

    def set_all(self, values: Mapping[tuple[str, ...], float]) -> None:
        """Every series' value; the series not named are gone (their count is zero). The
        dict is swapped whole, so a scrape sees one refresh or the next, never half of one."""
        self.values = dict(values)

    def describe(self) -> Iterator[GaugeMetricFamily]:
        yield GaugeMetricFamily(self.name, self.documentation, labels=self.labels)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(self.name, self.documentation, labels=self.labels)
        for labels, value in sorted(self.values.items()):
            family.add_metric(list(labels), value)
        yield family


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
# The alert for an instance that needs an operator (an incident, not a readiness failure):
# 1 while some reader of the instance has parked events or a scheduled unit fails
# (services/processes/health.py: incidents_of); the parked events per reader beside it (the
# inbound consumers' as "inbound"). Read from the database by
# ``services.processes.read_model_gauges`` wherever metrics are served, whichever process
# runs the reader; READER_PARKED, apart from them, is what the process leading a log reader
# parked itself.
DEGRADED = ReadModelGauge(
    "feedbackloop_degraded",
    "1 while the instance has parked events or failing scheduled units (ready, but an "
    "operator is needed).",
    [],
)
INSTANCE_PARKED = ReadModelGauge(
    "feedbackloop_instance_parked_events",
    "Parked events of the whole instance by reader, read from the database.",
    ["reader"],
)
# 1 from start until the process has connected (services/processes/waiting.py).
START_WAITING = Gauge(
    "feedbackloop_start_waiting",
    "1 until the process has connected at start to the dependency (0 once connected).",
    ["dependency"],
)
READER_PARKED_TOTAL = Counter(
    "feedbackloop_reader_parked_events", "Events the reader has parked, ever.", ["reader"]
)
# Callers refused for want of a valid key or token (401, UNAUTHENTICATED), by door only: they
# name nobody of a tenant, so they are counted here rather than audited (decisions D111).
UNAUTHENTICATED = Counter(
    "feedbackloop_unauthenticated_requests",
    "Requests refused for want of a valid key or token, by door (not audited: D111).",
    ["door"],
)
READER_RESTARTS = Counter(
    "feedbackloop_task_restarts",
    "Restarts of a supervised background task after a crash.",
    ["task"],
)

# SPEC C50: connectsoft.factory.learning.datasets, updown, by tenant and target: how many
# datasets have a published version, read from the datasets read model. The target is an
# agent or dataset id of the tenant's: shown only where tenant labels are (``tenant_label``).
DATASETS = ReadModelGauge(
    "connectsoft_factory_learning_datasets",
    "Datasets with a published version, by tenant and target (read from the read model).",
    ["tenant", "target"],
)

# SPEC C49: connectsoft.factory.learning.proposals, updown, by tenant, kind and state: how
# many proposals are in each state, read from the proposals read model.
LEARNING_PROPOSALS = ReadModelGauge(
    "connectsoft_factory_learning_proposals",
    "Learning proposals, by tenant, kind and state (read from the read model).",
    ["tenant", "kind", "state"],
)

# Scheduled work in bulkheads (``services.scheduling.failures``): the units (one tenant's
# proposal cluster, digest, night, or a night's case) that failed, by job — never by tenant.
SCHEDULED_FAILURES = Counter(
    "feedbackloop_scheduled_failures",
    "Units of scheduled work (a tenant's cluster, digest or night; a night's case) that "
    "failed, by job; the others of the same run went on.",
    ["job"],
)
SCHEDULED_FAILING = ReadModelGauge(
    "feedbackloop_scheduled_failing",
    "Units of scheduled work failing now (tried again at every tick), by job.",
    ["job"],
)

# The command bus's way, in the process that runs it (an API worker, an inbound consumer):
# how long a batch waited to be taken, was decided and was appended, and how many commands
# each append carried (group commit). A batch's own work may be a small part of its way; the
# stages show how much of the rest is waiting for a thread, the interpreter and PostgreSQL.
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
