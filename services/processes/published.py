"""Every context's publications, gathered: what the relay publishes and the documents show.

Each context declares its public events in its own ``published.py``; this module only
collects them, so the relay and ``services.processes.documents`` read one tuple without going
through the
composition root. It also says which topics exist: every published topic, every topic we
consume, and the dead-letter topic of each consumed one, all created at start-up.
"""

from faststream.kafka import KafkaBroker

from contracts import topics
from services.datasets.published import PUBLICATIONS as DATASET_PUBLICATIONS
from services.digests.published import PUBLICATIONS as DIGEST_PUBLICATIONS
from services.evals.published import PUBLICATIONS as EVAL_PUBLICATIONS
from services.feedback.published import PUBLICATIONS as FEEDBACK_PUBLICATIONS
from services.kafka.publication import Publication
from services.learning.published import PUBLICATIONS as LEARNING_PUBLICATIONS
from services.reports.published import PUBLICATIONS as REPORT_PUBLICATIONS

PUBLICATIONS: tuple[Publication, ...] = (
    *FEEDBACK_PUBLICATIONS,
    *REPORT_PUBLICATIONS,
    *EVAL_PUBLICATIONS,
    *DIGEST_PUBLICATIONS,
    *DATASET_PUBLICATIONS,
    *LEARNING_PUBLICATIONS,
)


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
    *topics.CONSUMED,
    *(topics.dead_letter(topic) for topic in topics.CONSUMED),
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
    for consumed in topics.CONSUMED:
        broker.publisher(
            topics.dead_letter(consumed),
            title=dead_letter_title(consumed),
            description="The original message, unchanged, with dlt-error, dlt-reason, "
            "dlt-field and dlt-original-topic/partition/offset headers.",
        )
