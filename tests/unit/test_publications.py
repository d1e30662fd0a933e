"""Publications are declared once (STYLE 11): what the relay sends, the
topics created at start, the AsyncAPI publishers and the schemas all come from the contexts'
declarations, and agree with each other."""

import json

import pytest

from contracts import topics
from services.feedback.published import RECORDED
from services.kafka.publication import Publication, to_message
from services.processes.documents import asyncapi_document
from services.processes.published import PUBLICATIONS, TOPICS, by_topic
from tests.unit.test_cloudevents import recorded_event


@pytest.mark.parametrize("publication", PUBLICATIONS, ids=lambda p: p.event.__qualname__)
def test_each_publication_names_a_payload_field_as_its_key(publication: Publication) -> None:
    aliases = {f.alias or name for name, f in publication.payload.model_fields.items()}
    assert publication.key in aliases


def test_each_event_class_is_published_at_most_once() -> None:
    events = [publication.event for publication in PUBLICATIONS]
    assert len(events) == len(set(events))


def test_a_topic_carries_one_cloudevent_type_and_one_payload() -> None:
    types = {publication.type for publication in by_topic().values()}
    assert len(types) == len(by_topic())  # and by_topic() refused two types on one topic


def test_every_published_consumed_and_dead_letter_topic_is_created_at_start() -> None:
    published = {publication.topic for publication in PUBLICATIONS}
    consumed = set(topics.CONSUMED)
    assert set(TOPICS) == published | consumed | {topics.dead_letter(t) for t in consumed}
    assert len(TOPICS) == len(set(TOPICS))


def test_the_asyncapi_document_has_one_channel_per_topic_and_no_other() -> None:
    addresses = {c["address"] for c in asyncapi_document()["channels"].values()}
    assert addresses == set(TOPICS)


def test_what_the_relay_sends_is_valid_against_the_published_envelope() -> None:
    """The AsyncAPI message and the JSON Schema are the envelope derived from the
    declaration; the Kafka value the relay builds from the same declaration must fit it."""
    event = recorded_event()
    message = to_message(RECORDED, event, "urn:test")
    envelope = RECORDED.envelope().model_validate_json(message.value)
    value = json.loads(message.value)
    assert envelope.type == RECORDED.type == value["type"]
    key = message.key.decode() if isinstance(message.key, bytes) else message.key
    assert value["data"][RECORDED.key] == key == value["subject"]
