"""What privacy publishes: that a person was erased, so that subscribers erase too
(docs/kafka.md says what a subscriber must do; decisions D44)."""

from typing import Any

from contracts import topics
from contracts.privacy import PersonErased
from services.kafka.publication import Publication
from services.privacy.domain import Erasure


def person_erased(event: Any) -> PersonErased:
    return PersonErased(
        erasure_id=event.originator_id,
        tenant_id=event.tenant_id,
        person_digest=event.person_digest,
        erased_at=event.timestamp,
        aggregate_ids=event.aggregates,
    )


PERSON_ERASED = Publication(
    event=Erasure.PersonErased,
    topic=topics.PERSON_ERASED,
    payload=PersonErased,
    to_contract=person_erased,
    key="erasureId",
    title="PersonErased",
    description="A person's data keys were destroyed: erase what you hold of them (decisions D44).",
)

PUBLICATIONS: tuple[Publication, ...] = (PERSON_ERASED,)
