"""The rebuild's fast paths against their plain paths, on a real PostgreSQL: a shared page
(``services.projecting.shared.Shared``) holds the events a follower's page
(``services.followers.decoding.read_page``) does, and a pass with the cyclic collector paused
(``services.projecting.collector``) builds the rows a pass with it running does."""

import contextlib

import pytest
from eventsourcing.utils import get_topic

import services.projecting.shared
from projections.appraisal import AppraisalFacts
from projections.datasets import Datasets
from projections.feedback_list import FeedbackList
from projections.read_model import Projection
from services.feedback.domain import Feedback
from services.followers.decoding import read_page
from services.processes.bootstrap import Runtime
from services.projecting.rebuild import rebuild_many
from services.projecting.shared import REBUILD_PAGE, Shared
from tests.integration.test_rebuild_rows import TABLES, record, rows


async def test_a_shared_page_holds_the_events_a_followers_page_does(runtime: Runtime) -> None:
    record(runtime, "t1", 120)
    topics = [get_topic(Feedback.Recorded)]
    shared = Shared.read(runtime.store, 0, topics)
    page = read_page(runtime.store, 0, REBUILD_PAGE, topics)
    plain = [decoded.event() for decoded in page.decoded]
    fast = shared.of(topics)
    assert shared.upto == page.upto
    assert [p.position for p in fast] == [p.position for p in plain]
    assert [p.event for p in fast] == [p.event for p in plain]


async def test_a_pass_builds_the_same_rows_with_the_collector_paused_as_with_it_on(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    record(runtime, "t1", 300)
    models: list[Projection] = [FeedbackList(), AppraisalFacts(), Datasets()]
    fast = await rebuild_many(runtime.store, runtime.pool, models, swap=False)
    expected = {
        model.name: await rows(runtime, model.name, schema)
        for model, schema in zip(models, fast, strict=True)
    }
    monkeypatch.setattr(services.projecting.shared, "collector_paused", contextlib.nullcontext)
    plain = await rebuild_many(runtime.store, runtime.pool, models, swap=False)
    for model, schema in zip(models, plain, strict=True):
        assert model.name in TABLES
        assert await rows(runtime, model.name, schema) == expected[model.name]
