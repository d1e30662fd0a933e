"""Every text-holding field of every event class is decided (decisions D130): declared
personal on its class (sealed under the key of the person it is of), or listed in
``services.store.impersonal`` with the reason it names nobody. A field added later without
either fails here."""

import datetime
import types
import typing
from collections.abc import Iterator

import pytest
from eventsourcing.domain import DomainEvent
from eventsourcing.utils import resolve_topic

import services.processes.contexts  # noqa: F401  (every context's events, imported)
from services.store import impersonal
from services.store.impersonal import EVERY_EVENT, OF_EVENT
from services.store.sealing import personal_of

pytestmark = pytest.mark.unit
ENVELOPE = {"originator_id", "originator_version", "timestamp", "originator_topic"}
NO_TEXT = {int, float, bool, datetime.datetime, type(None)}


def _subclasses(cls: type) -> Iterator[type]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def event_classes() -> dict[str, type]:
    """The event classes the store resolves, by topic (the library copies an aggregate's
    events into subclasses; the copy a topic resolves to is the one stored)."""
    found = {}
    for cls in _subclasses(DomainEvent):
        if not cls.__module__.startswith("services."):
            continue
        topic = f"{cls.__module__}:{cls.__qualname__}"
        try:
            if resolve_topic(topic) is cls:
                found[topic] = cls
        except Exception:
            continue
    return found


def can_hold_text(annotation: typing.Any) -> bool:
    if typing.get_origin(annotation) is typing.ClassVar:
        return False
    arguments = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return any(can_hold_text(a) for a in arguments)
    return annotation not in NO_TEXT


def field_of(path: str) -> str:
    """The event's field a declared path is in: ``facts.thread`` and ``threads[].text`` too."""
    return path.partition(".")[0].removesuffix("[]")


def undecided(topic: str, cls: type) -> list[str]:
    declared = personal_of(cls)
    personal = {field_of(p) for p in declared.every_field} if declared else set()
    reasons = {**EVERY_EVENT, **OF_EVENT.get(topic, {})}
    return [
        field
        for field, annotation in typing.get_type_hints(cls).items()
        if field not in ENVELOPE and can_hold_text(annotation)
        if field not in personal and field not in reasons
    ]


def test_the_events_are_found() -> None:
    topics = event_classes()
    assert "services.reports.domain:Report.Drafted" in topics
    assert "services.permissions.agent_register:AgentRegistration.Registered" in topics
    assert len(topics) > 50


def test_every_text_field_of_every_event_is_declared_personal_or_impersonal() -> None:
    left = {t: f for t, cls in sorted(event_classes().items()) if (f := undecided(t, cls))}
    assert left == {}, "declare each personal (Personal) or impersonal with a reason"


def test_a_field_is_declared_only_once() -> None:
    """Sealed and called impersonal at once is a contradiction; a stale entry is noise."""
    topics = event_classes()
    for topic, fields in OF_EVENT.items():
        assert topic in topics, topic
        hints = typing.get_type_hints(topics[topic])
        declared = personal_of(topics[topic])
        sealed = {field_of(p) for p in declared.every_field} if declared else set()
        for field in fields:
            assert field in hints, (topic, field)
            assert field not in sealed, (topic, field)


def test_no_field_is_left_unsealed_for_later() -> None:
    """A reason is why a field names nobody; "not sealed yet" is none (decisions D138): the
    module holds no list of exceptions, and no reason puts the sealing off."""
    lists = {n for n, v in vars(impersonal).items() if n.isupper() and isinstance(v, dict)}
    assert lists == {"EVERY_EVENT", "OF_EVENT"}
    reasons = [*EVERY_EVENT.values(), *(r for f in OF_EVENT.values() for r in f.values())]
    put_off = [r for r in reasons if "not sealed" in r.lower() or "yet" in r.lower().split()]
    assert put_off == []


def test_the_console_sessions_person_is_sealed() -> None:
    """Whose console session ended is sealed under their own key (D138): the ended sessions'
    read model is keyed by the aggregates' ids, so erasing them ends nothing open."""
    topics = event_classes()
    for topic in (
        "services.access.sessions:ConsoleSession.Ended",
        "services.access.sessions:PersonsSessions.Named",
        "services.access.sessions:PersonsSessions.AllEnded",
    ):
        declared = personal_of(topics[topic])
        assert declared is not None, topic
        assert "subject" in declared.names, topic


def test_the_fields_the_issue_names_are_sealed() -> None:
    """Issue 40 item 20/20b: each is sealed, under the right person's key."""
    topics = event_classes()

    def sealed(topic: str) -> set[str]:
        declared = personal_of(topics[topic])
        assert declared is not None, topic
        return set(declared.every_field)

    drafted = sealed("services.reports.domain:Report.Drafted")
    assert {"thread", "message_ref", "facts.thread", "facts.tools_called", "facts.extra"} <= drafted
    assert "must_ground" in sealed("services.evals.domain:EvalCase.Lifted")
    ran = sealed("services.evals.domain:EvalCase.RunRecorded")
    assert {"threads[].text", "threads[].toolCalls", "ran_by"} <= ran
    confirmed = personal_of(topics["services.evals.domain:EvalCase.Confirmed"])
    assert confirmed is not None
    assert confirmed.names == {"confirmed_by": "AgentMaintainer"}
    registered = personal_of(
        topics["services.permissions.agent_register:AgentRegistration.Registered"]
    )
    assert registered is not None
    assert "maintainers" in registered.names
    notified = personal_of(topics["services.reports.domain:Report.AgentOwnerNotified"])
    assert notified is not None
    assert "addressee" in notified.text
    assert "facts.addressee" in drafted
