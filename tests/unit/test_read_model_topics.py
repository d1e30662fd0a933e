"""The read models name the events they read by stored topic: each topic must still name an
event class, and each read model its own schema once."""

from importlib import import_module

import pytest
from eventsourcing.domain import DomainEvent
from eventsourcing.utils import get_topic, resolve_topic

from projections import events
from projections.appraisal import AppraisalFacts
from projections.datasets import Datasets
from projections.digests import Digests
from projections.eval_cases import EvalCases
from projections.feedback_list import FeedbackList
from projections.inbox import Inbox
from projections.learning_proposals import LearningProposals
from projections.nights import Nights
from projections.read_model import Projection, schema_of

MODELS: list[tuple[Projection, str]] = [
    (AppraisalFacts(run_events=(events.RUN_HARVESTED,)), "projections.appraisal"),
    (Datasets(), "projections.datasets"),
    (Digests(), "projections.digests"),
    (EvalCases(), "projections.eval_cases"),
    (FeedbackList(), "projections.feedback_list"),
    (Inbox(), "projections.inbox"),
    (LearningProposals(), "projections.learning_proposals"),
    (Nights(), "projections.nights"),
]


@pytest.mark.parametrize("topic", events.READ)
def test_each_topic_a_read_model_reads_names_an_event_class(topic: str) -> None:
    cls = resolve_topic(topic)
    assert isinstance(cls, type)
    assert issubclass(cls, DomainEvent)
    assert get_topic(cls) == topic


@pytest.mark.parametrize(("model", "module"), MODELS)
def test_a_read_model_reads_only_declared_topics(model: Projection, module: str) -> None:
    named = set(model.handles) | set(getattr(model, "order_free", ()))
    assert named <= set(events.READ)


@pytest.mark.parametrize(("model", "module"), MODELS)
def test_a_read_models_queries_read_the_schema_the_runtime_gives_it(
    model: Projection, module: str
) -> None:
    assert schema_of(model) == import_module(module).SCHEMA


def test_an_events_topic_is_its_classes_and_found_again_from_the_cache() -> None:
    cls = resolve_topic(events.FEEDBACK_RECORDED)
    event = object.__new__(cls)
    assert events.topic_of(event) == events.FEEDBACK_RECORDED
    assert events.topic_of(event) is events.topic_of(event)
