"""What the contexts publish and consume, derived from their declarations (``CONTEXTS``): the
relay's publications by topic and by event class, the topics created at start-up, and the
FastStream publishers the AsyncAPI document shows."""

from faststream.kafka import KafkaBroker

from contracts import topics
from services.kafka.publication import Publication
from services.processes.contexts import PUBLICATIONS, consumed_topics

__all__ = ["PUBLICATIONS", "TOPICS", "by_event", "by_topic", "declare_publishers"]


def by_topic(publications: tuple[Publication, ...] = PUBLICATIONS) -> dict[str, Publication]:
    """One publication per topic: the first declared (a topic may carry several event
    classes, always with the same CloudEvent type and payload)."""
    first: dict[str, Publication] = {}
    for publication in publications:
        seen = first.setdefault(publication.topic, publication)
        if (seen.type, seen.payload) != (publication.type, publication.payload):
            raise ValueError(f"{publication.topic} is declared with two types or payloads")
    return first


def by_event(publications: tuple[Publication, ...] = PUBLICATIONS) -> dict[type, Publication]:
    """The publication of each event class (an event class is published at most once)."""
    return {publication.event: publication for publication in publications}


# Every topic this service produces or consumes, created at start-up (never auto-created).
TOPICS: tuple[str, ...] = (
    *by_topic(),
    *consumed_topics(),
    *(topics.dead_letter(topic) for topic in consumed_topics()),
)


def dead_letter_title(topic: str) -> str:
    """``evaluation.feedback.v1.record-feedback`` → ``RecordFeedbackDeadLetter``."""
    name = topic.rsplit(".", 1)[-1]
    return "".join(part.capitalize() for part in name.split("-")) + "DeadLetter"


def declare_publishers(broker: KafkaBroker) -> None:
    """Every publication and dead-letter topic as a FastStream publisher, for the AsyncAPI
    document; the relay itself publishes (it owns the position)."""
    for topic, publication in by_topic().items():
        broker.publisher(
            topic,
            title=publication.title,
            description=f"{publication.description} A CloudEvent of type {publication.type}; "
            f"key = {publication.key}.",
            schema=publication.envelope(),
        )
    for consumed in consumed_topics():
        broker.publisher(
            topics.dead_letter(consumed),
            title=dead_letter_title(consumed),
            description="The original message, unchanged, with dlt-error, dlt-reason, "
            "dlt-field and dlt-original-topic/partition/offset headers.",
        )
