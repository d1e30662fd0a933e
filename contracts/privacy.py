"""Erasure of a person and the expiry of old text: the commands and what is published.

A person is named as the service knows them: the subject of their API key in their tenant
(the ``reporter`` of a report, the ``givenBy`` of feedback).
"""

from datetime import datetime
from typing import Annotated
from uuid import UUID

from pydantic import Field, StringConstraints

from contracts.feedback import Contract

PersonId = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^\S+$")]


class ErasePerson(Contract):
    """Destroy the person's data keys in the caller's tenant and record ``person-erased``
    (decisions D43); PlatformAdmin only."""

    person: PersonId
    # Filled by the service, never by a client (the route takes no body): the aggregates the
    # person's data was found in, named in ``person-erased`` for subscribers.
    aggregates: list[UUID] = Field(default_factory=list, max_length=100_000)


class ExpireText(Contract):
    """Retention: destroy the tenant's dated keys of the months before ``before`` (``YYYY-MM``)
    and record it (decisions D45). Issued by the scheduler."""

    before: Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{2}$")]


class PersonErased(Contract):
    """Published on ``evaluation.privacy.v1.person-erased``. The person is named by
    ``personDigest``, the SHA-256 of ``<tenantId>/<person>`` in hex: a subscriber finds whom
    it holds data of by digesting its own ids, and the topic itself names nobody."""

    erasure_id: UUID = Field(alias="erasureId")
    tenant_id: str = Field(alias="tenantId")
    person_digest: str = Field(alias="personDigest")
    erased_at: datetime = Field(alias="erasedAt")
    aggregate_ids: list[UUID] = Field(
        alias="aggregateIds",
        description="Reports, feedback, cases… the person's data was in: drop or overwrite "
        "what you hold under these ids.",
    )
