"""Prometheus metrics, exposed at ``/metrics`` (seed 004's metric names, dots as underscores)."""

from prometheus_client import Counter

# SPEC C48: connectsoft.factory.learning.feedback, counter, {feedback}, by tenant and kind.
FEEDBACK_RECORDED = Counter(
    "connectsoft_factory_learning_feedback",
    "Feedback recorded, by tenant and kind.",
    ["tenant", "kind"],
)
