"""Prometheus metrics, exposed at ``/metrics`` (seed 004's metric names, dots as underscores)."""

from prometheus_client import Counter, Gauge

# SPEC C48: connectsoft.factory.learning.feedback, counter, {feedback}, by tenant and kind.
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
