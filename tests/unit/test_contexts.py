"""Each context declares itself once, and the list of contexts is the one place the runtime
reads them from: a command, a read model, a publication or a subscription is declared by one
context only, and what the runtime derives agrees with the declarations."""

import subprocess
import sys
from collections import Counter

import pytest

from contracts import topics
from projections.read_model import schema_of
from services.declaration import Context, registry
from services.processes.contexts import CONTEXTS, SUBSCRIPTIONS, consumed_topics, read_models
from services.processes.published import PUBLICATIONS, TOPICS
from services.scheduling.orders import (
    AppraiseClosures,
    BuildDigest,
    ExpireOldText,
    PlanNight,
    RaiseProposals,
)

CONTEXT_NAMES = [context.name for context in CONTEXTS]


def repeated(values: list[object]) -> list[object]:
    return [value for value, count in Counter(values).items() if count > 1]


def test_each_context_is_listed_once() -> None:
    assert repeated(list(CONTEXT_NAMES)) == []
    assert repeated([id(context) for context in CONTEXTS]) == []


def test_every_command_type_is_declared_by_exactly_one_context() -> None:
    assert repeated([c.type for context in CONTEXTS for c in context.commands]) == []


def test_the_bus_registry_refuses_a_command_declared_twice() -> None:
    [first, *_] = [context for context in CONTEXTS if context.commands]
    twin = Context("twin", commands=(first.commands[0],))
    with pytest.raises(ValueError, match="declared twice"):
        registry((first, twin))


def test_the_registry_keeps_what_each_command_declares() -> None:
    commands = [c for context in CONTEXTS for c in context.commands]
    merged = registry(CONTEXTS)
    assert set(merged.handlers) == {c.type for c in commands}
    assert set(merged.creates) == {c.type for c in commands if c.creates}
    assert set(merged.replays) == {c.type for c in commands if c.replays}
    assert merged.alone == {c.type for c in commands if c.alone}
    for command in commands:
        # Behind its role rule (decisions D22): the handler is wrapped, the rule kept.
        assert merged.handlers[command.type].__closure__ is not None
        assert command.handler in (
            c.cell_contents for c in merged.handlers[command.type].__closure__
        )
        assert merged.permits[command.type] == command.permits


def test_every_read_model_name_and_schema_is_unique() -> None:
    models = read_models()
    assert repeated([model.name for model in models]) == []
    assert repeated([schema_of(model) for model in models]) == []
    assert len(models) == sum(len(context.read_models) for context in CONTEXTS)


def test_every_published_topic_is_declared_by_one_context() -> None:
    owners = {
        publication.topic: {c.name for c in CONTEXTS if publication in c.publications}
        for publication in PUBLICATIONS
    }
    assert {topic: names for topic, names in owners.items() if len(names) != 1} == {}
    assert repeated([publication.event for publication in PUBLICATIONS]) == []


def test_every_subscription_is_declared_once_and_its_payload_has_a_handler() -> None:
    assert repeated([(s.topic, s.cloudevent_type) for s in SUBSCRIPTIONS]) == []
    handlers = registry(CONTEXTS).handlers
    assert [s.title for s in SUBSCRIPTIONS if s.model not in handlers] == []


def test_the_consumed_topics_are_those_the_subscriptions_name() -> None:
    assert consumed_topics() == topics.CONSUMED
    assert set(TOPICS) >= {topics.dead_letter(topic) for topic in consumed_topics()}


def test_each_scheduled_order_is_carried_out_by_one_context() -> None:
    kinds = [order.kind for context in CONTEXTS for order in context.orders]
    assert sorted(kinds, key=str) == sorted(
        [PlanNight, BuildDigest, RaiseProposals, ExpireOldText, AppraiseClosures], key=str
    )


# The artifacts context stores bodies, not events, operations only reads the readers'
# standing, and the widget issues the feedback and reports contexts' commands: none has a
# domain module to decode with.
NO_EVENTS = {"artifacts", "operations", "widget"}


@pytest.mark.parametrize("name", [name for name in CONTEXT_NAMES if name not in NO_EVENTS])
def test_importing_a_contexts_domain_loads_no_web_framework(name: str) -> None:
    """Stored events are decoded by importing their domain module (its path is the topic):
    a rebuild's worker processes must not load the HTTP side for it."""
    probe = (
        f"import sys, services.{name}.domain; "
        "loaded = [m for m in ('fastapi', 'services.declaration') if m in sys.modules]; "
        "print(loaded); sys.exit(1 if loaded else 0)"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
